import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { startSweep } from '../start-sweep.ts';
import { sweepSettingsFromEnv } from '../sweep-settings.ts';

export const SWEEP_BODY_LIMIT = 64 * 1024;

/**
 * `POST /v1/sweeps`: validates the selection (400 naming every unknown checkpoint or suite) and starts the `sweep`
 * state machine through the workflows port; 202 with the sweep and execution ids. Posting an existing sweep id
 * resumes that sweep.
 */
export function makePostSweepHandler(ports: Ports): HttpApiHandler {
  const settings = sweepSettingsFromEnv();
  return httpApi(async (event) => ({ statusCode: 202, body: await startSweep(ports, event.jsonBody, settings) }), { jsonBodyMaxBytes: SWEEP_BODY_LIMIT });
}
