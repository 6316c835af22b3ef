export { startTestServer, useTestServer, type Posted, type PostOptions, type TestServer, type TestServerOptions, type TestSession } from './server.js';
export { functionCall, messageItem, modelResponse, textResponse } from '../responses.js';
export { checkExampleData, exampleRows, inputKey, readJsonl, recordedRollouts, type Row } from './data.js';
export { globalConfigFor, startStubServer, type StubAnswer, type StubHandler, type StubRequest, type StubServer } from './stub.js';
