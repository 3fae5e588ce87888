import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MALFORMED_RECORD, MalformedRecordError, defineRecordCodec, defineRecordView } from '../../lib/shared/record-codec.ts';

const vote = defineRecordCodec({
  kind: 'sample vote',
  schema: z.object({ group: z.string(), eventId: z.string(), rating: z.enum(['up', 'down']), perTask: z.array(z.object({ passed: z.boolean() })).optional() }),
  keys: (v) => ({ pk: `GROUP#${v.group}`, sk: `VOTE#${v.eventId}`, gsi1pk: `RATING#${v.rating}`, gsi1sk: v.eventId }),
  fromKeys: (k) => ({ group: k.pk.slice('GROUP#'.length) }),
});

const plain = defineRecordCodec({
  kind: 'sample note',
  schema: z.object({ id: z.string(), text: z.string() }),
  keys: (n) => ({ pk: `NOTE#${n.id}`, sk: 'NOTE' }),
});

/** The error a decode throws, for assertions on its fields. */
function decodeError(decode: () => unknown): MalformedRecordError {
  try {
    decode();
  } catch (error) {
    if (error instanceof MalformedRecordError) return error;
    throw error;
  }
  throw new Error('expected a MalformedRecordError');
}

describe('encode', () => {
  it('adds the keys and drops fields the schema does not name', () => {
    const extra = { id: 'n-1', text: 'hello', stray: 1 };
    expect(plain.encode(extra)).toEqual({ pk: 'NOTE#n-1', sk: 'NOTE', id: 'n-1', text: 'hello' });
  });

  it('stores a field the keys hold only once, in the key', () => {
    expect(vote.encode({ group: 'g', eventId: 'e-1', rating: 'up' })).toEqual({ pk: 'GROUP#g', sk: 'VOTE#e-1', gsi1pk: 'RATING#up', gsi1sk: 'e-1', eventId: 'e-1', rating: 'up' });
  });

  it('refuses a value that does not match its kind, naming the field', () => {
    const bad = { id: 'n-2', text: 7 } as unknown as { id: string; text: string };
    expect(() => plain.encode(bad)).toThrow(/sample note record NOTE#n-2 \/ NOTE: field "text"/);
  });
});

describe('decode', () => {
  it('drops the key attributes and unknown stored attributes, and reads fields back from the keys', () => {
    const item = { pk: 'GROUP#g', sk: 'VOTE#e-1', gsi1pk: 'RATING#up', gsi1sk: 'e-1', gsi2pk: 'x', gsi2sk: 'y', eventId: 'e-1', rating: 'up', legacy: true };
    expect(vote.decode(item)).toEqual({ group: 'g', eventId: 'e-1', rating: 'up' });
  });

  it('round-trips what encode stored', () => {
    const value = { group: 'g', eventId: 'e-2', rating: 'down' as const, perTask: [{ passed: true }] };
    expect(vote.decode(vote.encode(value))).toEqual(value);
  });

  it('throws MalformedRecordError naming the kind, pk, sk and field path of a malformed record', () => {
    const error = decodeError(() => vote.decode({ pk: 'GROUP#g', sk: 'VOTE#e-3', eventId: 'e-3', rating: 'up', perTask: [{ passed: true }, { passed: 'yes' }] }));
    expect(error.name).toBe(`Flywheel.${MALFORMED_RECORD}`);
    expect(error).toMatchObject({ pk: 'GROUP#g', sk: 'VOTE#e-3', field: 'perTask.1.passed' });
    expect(error.message).toMatch(/^sample vote record GROUP#g \/ VOTE#e-3: field "perTask\.1\.passed": /);
  });

  it('names a missing field', () => {
    const error = decodeError(() => plain.decode({ pk: 'NOTE#n-3', sk: 'NOTE', id: 'n-3' }));
    expect(error).toMatchObject({ pk: 'NOTE#n-3', sk: 'NOTE', field: 'text' });
    expect(error.message).toContain('sample note record NOTE#n-3 / NOTE: field "text"');
  });

  it('decodeIfPresent passes an absent item through', () => {
    expect(plain.decodeIfPresent(undefined)).toBeUndefined();
    expect(plain.decodeIfPresent({ pk: 'NOTE#n-4', sk: 'NOTE', id: 'n-4', text: 't' })).toEqual({ id: 'n-4', text: 't' });
  });
});

describe('defineRecordView', () => {
  it('reads only the fields a reader needs, with the same errors', () => {
    const status = defineRecordView({ kind: 'sample note', schema: z.object({ text: z.string() }) });
    expect(status.decode({ pk: 'NOTE#n-5', sk: 'NOTE', id: 'n-5', text: 't' })).toEqual({ text: 't' });
    expect(() => status.decode({ pk: 'NOTE#n-6', sk: 'NOTE', text: null })).toThrow(MalformedRecordError);
  });
});
