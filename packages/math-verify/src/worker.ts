// Checker process entry: runs library checks for MathVerifier (src/pool.ts) over the IPC channel.
import { verifyAnswerWithLibrary } from './verify.js';

type Request = { id: number; expected: string; generated: string };

if (typeof process.send === 'function') {
  const send = (msg: unknown) => process.send!(msg);
  process.on('message', (msg: Request) => {
    let result;
    try {
      result = verifyAnswerWithLibrary(msg.expected, msg.generated);
    } catch {
      result = { reward: 0.0, extracted: null };
    }
    send({ id: msg.id, result });
  });
  // the parent went away: nothing left to do
  process.on('disconnect', () => process.exit(0));
  // warm up (regex compilation) before reporting ready, so time limits only measure checks
  verifyAnswerWithLibrary('1', '\\boxed{1}');
  send({ ready: true });
}
