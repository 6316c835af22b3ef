#!/usr/bin/env node
import { freshBuild } from './fresh-build.js';

await freshBuild('upload-dataset');
const { cli } = await import('../dist/src/main.js');
await cli('upload-dataset');
