/**
 * Float32 arrays as base64 strings: a serialised classifier's weights round-trip bit for bit and take ~5 characters
 * per weight instead of ~20 as JSON numbers. Bytes are little-endian (the platform order of every Node target here).
 */
import { endianness } from 'node:os';
import { ValidationError } from '../../errors.ts';

if (endianness() !== 'LE') throw new Error('float-codec assumes a little-endian platform');

export function encodeFloat32(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/** @throws ValidationError when the string is not base64 of a whole number of float32 values. */
export function decodeFloat32(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length % 4 !== 0 || bytes.toString('base64') !== base64) {
    throw new ValidationError('not a base64 float32 array', [{ path: 'weights', message: `length ${bytes.length} bytes` }]);
  }
  const out = new Float32Array(bytes.length / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}
