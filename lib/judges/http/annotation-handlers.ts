/**
 * Annotation queues, gold sets, calibration and the drift check over HTTP. Reads need the `read` scope, the rest
 * `admin` (the route table says so).
 */
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { JsonApiEvent } from '../../api/middlewares/http-event.ts';
import { ValidationError } from '../../errors.ts';
import { createModel } from '../../models/create-model.ts';
import { JUDGE_MODEL_ENV, ModelNotConfiguredError } from '../../modes/modes-models.ts';
import { notifyOptionsFromEnv } from '../../people/notify.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { listAnnotations } from '../annotation/annotation-queue.ts';
import { createGoldSet, getGoldSet, postAnnotation, showGoldSet } from '../annotation/gold-sets.ts';
import { calibrateJudge, failureModeJudgeRunner } from '../calibrate-judge.ts';
import { defaultJudgeRunners, deriveSettingsFromEnv } from '../derive/judge-runners.ts';
import { checkDrift } from '../drift/check-drift.ts';
import { labelAnnotationAndWatch } from '../drift/label-and-watch.ts';
import type { JudgeKind } from '../judge-identity.ts';
import { resolveJudge } from '../registry/read-judges.ts';
import { pairwiseJudgeRunner } from '../runners/pairwise-runner.ts';
import { rubricJudgeRunner } from '../runners/rubric-runner.ts';
import type { Subject } from '../schemas.ts';

/** Body limit of the annotation routes: a subject, a few dozen labels, a gold set of up to 1,000 subjects. */
export const ANNOTATION_BODY_LIMIT = 256 * 1024;

const param = (event: JsonApiEvent, name: string): string => {
  const value = event.pathParameters?.[name];
  if (!value) throw new ValidationError(`Missing path parameter ${name}`, [{ path: name, message: 'required' }]);
  return value;
};

/** `GET /v1/annotations?queue=&reason=&status=pending|done&limit=&cursor=`: newest first. */
export function makeListAnnotationsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listAnnotations(ports, event.queryStringParameters ?? {}) }));
}

/** `POST /v1/annotations` `{ subject, reason, queue?, labels? } | { goldSet, subject }`: 201 new, 200 already queued. */
export function makePostAnnotationHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const result = await postAnnotation(ports, event.jsonBody);
      return { statusCode: result.created ? 201 : 200, body: result };
    },
    { jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT },
  );
}

/** `POST /v1/annotations/{id}/labels` `{ annotator, labels }`: the item, and the drift check when it was a drift item. */
export function makePostAnnotationLabelsHandler(ports: Ports): HttpApiHandler {
  const notify = notifyOptionsFromEnv();
  return httpApi(async (event) => ({ statusCode: 200, body: await labelAnnotationAndWatch(ports, param(event, 'id'), event.jsonBody, { notify }) }), {
    jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT,
  });
}

/** `POST /v1/gold-sets` `{ name, judge, labels, twoPersonFraction?, description?, subjects? }`: 201. */
export function makePostGoldSetHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 201, body: await createGoldSet(ports, event.jsonBody) }), { jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT });
}

/** `GET /v1/gold-sets/{name}`: the set, its pending and done counts and the two-person slice. */
export function makeGetGoldSetHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await showGoldSet(ports, param(event, 'name')) }));
}

export const CalibrateRequest = z.strictObject({
  goldSet: z.string().min(1).max(64),
  /** The version to calibrate; default the latest registered one is not guessed: the promoted one. */
  version: z.string().regex(/^[0-9a-f]{12}$/, '12 hex characters').optional(),
  retestFraction: z.number().min(0).max(1).optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
  seed: z.number().int().optional(),
  resamples: z.number().int().min(100).max(10_000).optional(),
});

/** The subject kind each judge kind reads (a reward model reads whichever its gold set holds). */
const SUBJECT_KIND_OF_JUDGE: Partial<Record<JudgeKind, Subject['kind']>> = { rubric: 'attempt', pairwise: 'pair', 'failure-mode': 'signal' };

/**
 * `POST /v1/judges/{name}/calibrate` `{ goldSet, version?, … }`: runs the judge over the gold set and stores the
 * report (200 with it). Every kind: rubric judges on gold sets of attempts, pairwise judges on pairs (each pair judged
 * again swapped), failure-mode judges on signals, reward models; a gold set of another subject kind is a 400 naming
 * `kind`. A prompted judge's model is the one the judge's definition names, or the configured judge model
 * (`FLYWHEEL_JUDGE_MODEL`) when that is not a model spec (503 when neither is).
 */
export function makeCalibrateJudgeHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const parsed = CalibrateRequest.safeParse(event.jsonBody ?? {});
      if (!parsed.success) throw new ValidationError('Invalid calibration request', toFieldIssues(parsed.error.issues));
      const { goldSet, version, ...rest } = parsed.data;
      const name = param(event, 'name');
      const judge = await resolveJudge(ports, version ? `${name}@${version}` : name);
      const def = judge.definition;
      const wanted = SUBJECT_KIND_OF_JUDGE[def.kind];
      const set = await getGoldSet(ports, goldSet);
      if (wanted !== undefined && set.subjectKind !== wanted) {
        throw new ValidationError(`${name} is a ${def.kind} judge of ${wanted}s; gold set ${goldSet} holds ${set.subjectKind}s`, [
          { path: 'kind', message: `a ${def.kind} judge is calibrated on a gold set of ${wanted}s` },
        ]);
      }
      // Failure-mode judges run the chain's judge; rubric and pairwise judges read stored attempts; reward models
      // (distilled judges) are scored in process. Prices from FLYWHEEL_JUDGE_PRICING give a verdict's cost.
      const run =
        def.kind === 'failure-mode'
          ? failureModeJudgeRunner(ports, { model: judgeModelOf(def.model), ...(def.taxonomyVersion !== undefined ? { taxonomyVersion: def.taxonomyVersion } : {}) })
          : defaultJudgeRunners(ports, deriveSettingsFromEnv(), {
              rubric: (d) => rubricJudgeRunner(ports, { model: judgeModelOf(d.model), definition: d }),
              pairwise: (d) => pairwiseJudgeRunner(ports, { model: judgeModelOf(d.model), definition: d }),
            }).runnerFor(def);
      if (!run) {
        throw new ValidationError(`${name} is a ${def.kind} judge this deployment cannot run`, [{ path: 'kind', message: `no runner for this ${def.kind} judge (model ${def.model})` }]);
      }
      const report = await calibrateJudge(ports, { judge: { name: judge.name, version: judge.version }, goldSet, run, ...rest });
      return { statusCode: 200, body: report };
    },
    { jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT },
  );
}

function judgeModelOf(spec: string): ModelsPort {
  try {
    return createModel(spec, { env: process.env });
  } catch {
    const configured = process.env[JUDGE_MODEL_ENV]?.trim();
    if (!configured) throw new ModelNotConfiguredError('Calibrating a judge', JUDGE_MODEL_ENV);
    return createModel(configured, { env: process.env });
  }
}

/** `POST /v1/judges/{name}/drift-check` `{ window?, maxDrop?, minN?, version?, dryRun? }`: the check (a drop demotes and notifies). */
export function makeDriftCheckHandler(ports: Ports): HttpApiHandler {
  const notify = notifyOptionsFromEnv();
  return httpApi(async (event) => ({ statusCode: 200, body: await checkDrift(ports, param(event, 'name'), (event.jsonBody ?? {}) as object, notify) }), {
    jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT,
  });
}
