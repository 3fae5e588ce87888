import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { ForbiddenError } from '../../auth/forbidden-error.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import type { Ports } from '../../ports/ports.ts';
import { startSweep } from '../start-sweep.ts';
import { sweepSettingsFromEnv } from '../sweep-settings.ts';

export const SWEEP_BODY_LIMIT = 64 * 1024;

/**
 * `POST /v1/sweeps`: validates the selection (400 naming every unknown checkpoint or suite) and starts the `sweep`
 * state machine through the workflows port; 202 with the sweep and execution ids. Posting an existing sweep id
 * resumes that sweep. Admin scope. The sweep workflow runs over the root ports (it does not carry a tenant yet), so only
 * keys of the default tenant start sweeps; another tenant's gets 403 (its view of the ports has no workflows).
 */
export function makePostSweepHandler(ports: Ports): HttpApiHandler {
  const settings = sweepSettingsFromEnv();
  return httpApi(
    async (event) => {
      const tenant = principalOfContext(event.requestContext?.authorizer)?.tenant;
      if (tenant !== undefined && tenant !== DEFAULT_TENANT) {
        throw new ForbiddenError(`Forbidden: sweeps run for the ${DEFAULT_TENANT} tenant only; tenant ${tenant} cannot start one yet`);
      }
      return { statusCode: 202, body: await startSweep(ports, event.jsonBody, settings) };
    },
    { jsonBodyMaxBytes: SWEEP_BODY_LIMIT },
  );
}
