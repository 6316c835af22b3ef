// Worker-thread entry: runs library checks off the main event loop.
import { parentPort } from 'node:worker_threads';
import { verifyAnswerWithLibrary } from './verify.js';

if (parentPort) {
  const port = parentPort;
  port.on('message', (msg: { id: number; expected: string; generated: string }) => {
    let result;
    try {
      result = verifyAnswerWithLibrary(msg.expected, msg.generated);
    } catch {
      result = { reward: 0.0, extracted: null };
    }
    port.postMessage({ id: msg.id, result });
  });
  // warm up (regex compilation) before reporting ready, so time limits only measure checks
  verifyAnswerWithLibrary('1', '\\boxed{1}');
  port.postMessage({ ready: true });
}
