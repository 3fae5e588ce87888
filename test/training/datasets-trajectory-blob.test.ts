/**
 * The one trajectory-blob reader the dataset builder and the decision extractor share: the harness's JSON Lines, and
 * a feedback upload as the ingest stores it (`JSON.stringify(inline)`: the lines as one JSON string, as a JSON array of
 * line objects, or one ATIF document); a blob over the bound or malformed gives a reason, not an exception.
 */
import { describe, expect, it } from 'vitest';
import { toAtif } from '../../lib/harness/trajectory/atif.ts';
import { readTrajectoryBlob } from '../../lib/harness/trajectory/read-trajectory-blob.ts';
import { toJsonl } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { handTrajectory } from './decisions-support.ts';

const t = handTrajectory('blob-1', [
  { assistant: 'reading', calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.js"}' }] },
  { result: 'text', toolCallId: 'c1', name: 'read_file' },
]);
const bytes = (s: string) => new TextEncoder().encode(s);
const messageIds = (b: Uint8Array) => {
  const r = readTrajectoryBlob(b);
  if ('problem' in r) throw new Error(r.problem);
  return r.trajectory.steps.flatMap((s) => (s.type === 'assistant' ? [s.messageId] : []));
};

describe('readTrajectoryBlob', () => {
  it('reads JSON Lines, and an inline upload as a JSON string, a JSON array of lines, or ATIF', () => {
    const jsonl = toJsonl(t);
    expect(messageIds(bytes(jsonl))).toEqual(['blob-1:m1']);
    expect(messageIds(bytes(JSON.stringify(jsonl)))).toEqual(['blob-1:m1']);
    expect(messageIds(bytes(JSON.stringify(jsonl.trim().split('\n').map((l) => JSON.parse(l) as unknown))))).toEqual(['blob-1:m1']);
    const atif = readTrajectoryBlob(bytes(JSON.stringify(toAtif(t))));
    expect('trajectory' in atif && atif.trajectory.header.attemptId).toBe('blob-1');
  });

  it('gives a reason for a malformed blob and one over the bound (checked before parsing)', () => {
    expect(readTrajectoryBlob(bytes('{"type": "nope"}'))).toEqual({ problem: expect.stringMatching(/^the trajectory is malformed: /) });
    expect(readTrajectoryBlob(bytes(toJsonl(t)), 10)).toEqual({ problem: 'the trajectory is over 10 bytes' });
  });
});
