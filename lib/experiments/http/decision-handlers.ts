/**
 * Decisions over HTTP: `POST /v1/experiments/{id}/decide` (admin) ship, roll back or extend an experiment, resting on
 * its newest analysis. The caller's API key id (`key:<id>`) is recorded as who decided.
 */
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { decideExperiment } from '../decisions/decide-experiment.ts';
import { ExperimentId } from '../schemas.ts';
import { actorOf } from './lifecycle-handlers.ts';

/** Body limit of `POST /v1/experiments/{id}/decide`: a kind, an arm and a reason of at most 4000 characters. */
export const DECIDE_BODY_LIMIT = 32 * 1024;

export const DecideParams = z.strictObject({ id: ExperimentId });

/** `POST /v1/experiments/{id}/decide` `{ kind, arm?, reason, extendDays? }`: 200 with the experiment and the decision. */
export function makeDecideExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { id } = parseInput(DecideParams, event.pathParameters ?? {}, 'path');
      const result = await decideExperiment(ports, id, event.jsonBody, actorOf(event));
      return { statusCode: 200, body: result };
    },
    { jsonBodyMaxBytes: DECIDE_BODY_LIMIT },
  );
}
