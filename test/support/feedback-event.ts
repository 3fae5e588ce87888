/**
 * Feedback events as a client posts them: `feedbackEvent` with fixed, known field values (handler tests assert on
 * them), and `liveFeedbackEvent`, the same shape stamped now with a unique id, for a running runtime whose queries
 * look at a recent time window and whose ids must not collide across runs.
 *
 * @example
 * const event = feedbackEvent({ rating: 'down' });
 * await fetch(`${runtime.url}/v1/feedback`, { method: 'POST', body: JSON.stringify(liveFeedbackEvent({ model })) });
 */

/** A valid feedback event; override any field (the trace id follows `eventId`). */
export function feedbackEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = (overrides.eventId as string | undefined) ?? `e-${Math.random().toString(36).slice(2, 10)}`;
  return {
    eventId: id,
    kind: 'rating',
    traceId: `trace-${id}`,
    sessionId: 'sess-1',
    turnId: 'turn-1',
    model: 'ckpt-7',
    rating: 'up',
    source: 'user',
    reporter: 'user-42',
    trainingConsent: true,
    occurredAt: '2026-12-02T09:59:00Z',
    ...overrides,
  };
}

let live = 0;
/** A valid feedback event with a unique id and trace id, occurred now; override any field. */
export function liveFeedbackEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  live++;
  const id = `e2e-${process.pid}-${Date.now().toString(36)}-${live}`;
  return feedbackEvent({ eventId: id, traceId: `trace-${id}`, occurredAt: new Date().toISOString(), ...overrides });
}
