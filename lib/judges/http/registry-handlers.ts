/**
 * The judge registry over HTTP: list, show, register, promote, retire, and a judge's calibration reports. Reads need
 * the `read` scope, the rest `admin` (the route table says so): a forced promotion is an admin's call by construction.
 */
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { JsonApiEvent } from '../../api/middlewares/http-event.ts';
import type { Ports } from '../../ports/ports.ts';
import { listCalibrations } from '../registry/calibrations.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { promoteJudge, retireJudge } from '../registry/promote-judge.ts';
import { getJudge, listJudges } from '../registry/read-judges.ts';
import { registerJudge } from '../registry/register-judge.ts';
import { JudgeNameParams, PromoteJudgeBodySchema, RetireJudgeBodySchema } from '../registry/schemas.ts';

/** Body limit of `POST /v1/judges`: a prompt (≤ 64,000 characters), a rubric (≤ 50 criteria of ≤ 2,000), an output schema. */
export const REGISTER_JUDGE_BODY_LIMIT = 512 * 1024;
/** Body limit of promote and retire: a version, a reason (≤ 2,000 characters) and a name. */
export const JUDGE_ACTION_BODY_LIMIT = 16 * 1024;

function nameOf(event: JsonApiEvent): string {
  return parseInput(JudgeNameParams, event.pathParameters ?? {}, 'path').name;
}

/** Who calls: the body's `by`, else the API key's id the authorizer put on the request. */
function callerOf(event: JsonApiEvent, by: string | undefined): string {
  if (by) return by;
  const keyId = (event.requestContext?.authorizer as { keyId?: unknown } | null | undefined)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `key:${keyId}` : 'api';
}

/** `GET /v1/judges?limit=&cursor=`. */
export function makeListJudgesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listJudges(ports, event.queryStringParameters ?? {}) }));
}

/** `GET /v1/judges/{name}`: every version, which is promoted, the latest calibration of each; 404 if unknown. */
export function makeGetJudgeHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await getJudge(ports, nameOf(event)) }));
}

/** `POST /v1/judges`: a definition (plus `acceptanceRule`); 201 for a new version, 200 for the same definition again. */
export function makeRegisterJudgeHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const body = event.jsonBody;
      const withBy = body !== null && typeof body === 'object' && !Array.isArray(body) && !('by' in body) ? { ...body, by: callerOf(event, undefined) } : body;
      const result = await registerJudge(ports, withBy);
      return { statusCode: result.created ? 201 : 200, body: result };
    },
    { jsonBodyMaxBytes: REGISTER_JUDGE_BODY_LIMIT },
  );
}

/** `POST /v1/judges/{name}/promote` `{ version, force?, reason?, by? }`: 200, 409 refused (reasons) or lost a race. */
export function makePromoteJudgeHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const name = nameOf(event);
      const b = parseInput(PromoteJudgeBodySchema, event.jsonBody, 'promotion');
      const result = await promoteJudge(ports, { name, version: b.version }, { by: callerOf(event, b.by), ...(b.force ? { force: true } : {}), ...(b.reason ? { reason: b.reason } : {}) });
      return { statusCode: 200, body: result };
    },
    { jsonBodyMaxBytes: JUDGE_ACTION_BODY_LIMIT },
  );
}

/** `POST /v1/judges/{name}/retire` `{ version, reason?, by? }`: 200 (`changed: false` when it already was). */
export function makeRetireJudgeHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const name = nameOf(event);
      const b = parseInput(RetireJudgeBodySchema, event.jsonBody, 'retirement');
      const result = await retireJudge(ports, { name, version: b.version }, { by: callerOf(event, b.by), ...(b.reason ? { reason: b.reason } : {}) });
      return { statusCode: 200, body: result };
    },
    { jsonBodyMaxBytes: JUDGE_ACTION_BODY_LIMIT },
  );
}

/** `GET /v1/judges/{name}/calibrations?version=&limit=&cursor=`: the reports, newest first within a version. */
export function makeListCalibrationsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listCalibrations(ports, nameOf(event), event.queryStringParameters ?? {}) }));
}
