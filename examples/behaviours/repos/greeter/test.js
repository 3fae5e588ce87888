import assert from 'node:assert/strict';
import { greet } from './src/greet.js';

assert.match(greet('Ana'), /^Hello, Ana/);
console.log('ok');
