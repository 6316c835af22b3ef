export { startTestServer, useTestServer, type TestServer, type TestSession } from './server.js';
export { functionCall, messageItem, modelResponse, textResponse } from '../responses.js';
export { checkExampleData, exampleRows, readJsonl, recordedRollouts } from './data.js';
export { globalConfigFor, startStubServer, type StubAnswer, type StubRequest, type StubServer } from './stub.js';
