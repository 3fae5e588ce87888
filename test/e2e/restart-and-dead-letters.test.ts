/**
 * Durability across a hard kill, and a poison message through the dead-letter queue and back with the CLI.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startRuntime, type RuntimeProcess } from './runtime-process.ts';
import { liveFeedbackEvent } from '../support/feedback-event.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { PROCESS_TEST_TIMEOUT_MS, waitFor } from '../support/wait-for.ts';

const tempDir = tempDirs('flywheel-e2e-');
const running: RuntimeProcess[] = [];
const start = async (dataDir: string, env: Record<string, string> = {}, args: string[] = []) => {
  const rt = await startRuntime({ dataDir, env, args });
  running.push(rt);
  return rt;
};

afterAll(async () => {
  for (const rt of running) await rt.stop('SIGKILL');
});

const send = (rt: RuntimeProcess, body: unknown) =>
  fetch(`${rt.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'x-api-key': rt.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const status = async (rt: RuntimeProcess, eventId: string) => {
  const res = await fetch(`${rt.url}/v1/feedback/${eventId}`, { headers: { 'x-api-key': rt.apiKey } });
  await res.body?.cancel();
  return res.status;
};

describe('restart and dead letters', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('keeps everything it answered 202 for across a kill -9 and a restart', async () => {
    const dataDir = tempDir();
    // A message in flight at the kill comes back after the visibility timeout: keep it well inside the wait below.
    const first = await start(dataDir, {}, ['--visibility-timeout', '2']);
    const events = Array.from({ length: 300 }, () => liveFeedbackEvent());
    // 30 requests of 10, all in flight at once, then kill at once: most are still in the queue.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => send(first, { events: events.slice(i * 10, i * 10 + 10) })),
    );
    for (const a of answers) expect(a.status).toBe(202);
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = await start(dataDir, {}, ['--visibility-timeout', '2']);
    expect(second.apiKey).toBe(first.apiKey); // the key is kept in the data folder
    let missing: unknown[] = [];
    await waitFor(
      async () => {
        missing = [];
        for (const e of events) if ((await status(second, e.eventId as string)) !== 200) missing.push(e.eventId);
        return missing.length === 0 ? true : undefined;
      },
      { what: () => `all 300 events stored after the restart (${missing.length} missing)`, timeoutMs: 60_000, everyMs: 200 },
    );
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('moves a poison message to the DLQ after maxReceiveCount; dlq list shows it, dlq redrive brings it back', async () => {
    const dataDir = tempDir();
    const poisoned = await start(
      dataDir,
      { FLYWHEEL_FAIL_MESSAGES_MATCHING: 'poison-' },
      ['--max-receive-count', '2', '--visibility-timeout', '1'],
    );
    const poison = liveFeedbackEvent({ eventId: `poison-${Date.now()}` });
    const healthy = liveFeedbackEvent();
    expect((await send(poisoned, poison)).status).toBe(202);
    expect((await send(poisoned, healthy)).status).toBe(202);
    await waitFor(async () => ((await status(poisoned, healthy.eventId as string)) === 200 ? true : undefined), { what: 'the healthy event to be stored' });

    // 2 failed receives, 1 s apart, then the third receive moves it to the DLQ.
    const listed = await waitFor(
      async () => {
        const { stdout } = await runCli(['dlq', 'list', '--json', '--data-dir', dataDir]);
        const messages = JSON.parse(stdout) as Array<{ messageId: string; body: string }>;
        return messages.length > 0 ? messages : undefined;
      },
      { what: 'the poison message in the DLQ', timeoutMs: 60_000, everyMs: 300 },
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]!.body).toContain(poison.eventId as string);
    expect(await status(poisoned, poison.eventId as string)).toBe(404);
    const table = await runCli(['dlq', 'list', '--data-dir', dataDir]);
    expect(table.stdout).toContain(listed[0]!.messageId);
    expect(table.stdout).toContain('1 dead letter(s)');

    // The fault is fixed (the runtime restarts without it); redrive and the event gets stored.
    expect(await poisoned.stop('SIGTERM')).toBe(0);
    const fixed = await start(dataDir, {}, ['--max-receive-count', '2', '--visibility-timeout', '1']);
    const { stdout } = await runCli(['dlq', 'redrive', '--data-dir', dataDir, '--json']);
    expect(JSON.parse(stdout)).toEqual({ moved: 1, failed: [] });
    await waitFor(async () => ((await status(fixed, poison.eventId as string)) === 200 ? true : undefined), { what: 'the redriven event to be stored' });
    const after = await runCli(['dlq', 'list', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(after.stdout)).toEqual([]);
  });

  it('sends and lists feedback with the CLI against the running runtime', async () => {
    const dataDir = tempDir();
    const rt = await start(dataDir);
    const model = `ckpt-cli-${Date.now()}`;
    const sent = await runCli([
      'feedback', 'send', '--data-dir', dataDir, '--event-id', `cli-${Date.now()}`, '--rating', 'down',
      '--trace-id', 't-cli', '--session-id', 's-cli', '--turn-id', '3', '--model', model, '--comment', 'broke the build', '--json',
    ]);
    const answer = JSON.parse(sent.stdout) as { status: number; results: Array<{ eventId: string; status: string }> };
    expect(answer.status).toBe(202);
    const eventId = answer.results[0]!.eventId;
    const listed = await waitFor(
      async () => {
        const { stdout } = await runCli(['feedback', 'list', '--data-dir', dataDir, '--model', model]);
        return stdout.includes(eventId) ? stdout : undefined;
      },
      { what: `feedback list to show ${eventId}`, timeoutMs: 60_000 },
    );
    expect(listed).toContain('down');
    expect(listed).toContain('1 item(s)');
    await rt.stop('SIGTERM');
  });
});
