#!/usr/bin/env node
// The trainer's vLLM server stand-in as a process (see src/serve.ts for the flags).
await import('../dist/src/serve.js');
