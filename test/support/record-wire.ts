/**
 * Records every request body an AWS SDK client sends, by operation, as the JSON goes on the wire: what the Batch
 * driver tests assert against (the wire shape is the contract, not the SDK's input objects).
 *
 * @example
 * const sent = recordWire(batch);
 * await jobs.submit(…);
 * expect(sent.find((s) => s.operation === 'SubmitJobCommand')?.body).toMatchObject({ jobQueue: … });
 */
import type { BatchClient } from '@aws-sdk/client-batch';

export function recordWire(client: BatchClient): Array<{ operation: string; body: Record<string, unknown> }> {
  const sent: Array<{ operation: string; body: Record<string, unknown> }> = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const raw = (args.request as { body?: unknown }).body;
      const text = typeof raw === 'string' ? raw : raw instanceof Uint8Array ? new TextDecoder().decode(raw) : '';
      if (text !== '') sent.push({ operation: String(context.commandName), body: JSON.parse(text) });
      return next(args);
    },
    { step: 'build', name: 'flywheelRecordWire' },
  );
  return sent;
}
