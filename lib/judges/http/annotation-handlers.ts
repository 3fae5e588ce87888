/**
 * Annotation queues, gold sets, calibration and the drift check over HTTP. Reads need the `read` scope, the rest
 * `admin` (the route table says so).
 */
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { JsonApiEvent } from '../../api/middlewares/http-event.ts';
import { ConflictError, ValidationError } from '../../errors.ts';
import { createModel } from '../../models/create-model.ts';
import { JUDGE_MODEL_ENV } from '../../modes/modes-models.ts';
import { noticeDeliveryOptionsFromEnv } from '../../people/notices/deliver-notice.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { Ports } from '../../ports/ports.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { listAnnotations } from '../annotation/annotation-queue.ts';
import { addToGoldSet, createGoldSet, getGoldSet, GoldSetRequest, postAnnotation, showGoldSet } from '../annotation/gold-sets.ts';
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
  const notify = noticeDeliveryOptionsFromEnv();
  return httpApi(async (event) => ({ statusCode: 200, body: await labelAnnotationAndWatch(ports, param(event, 'id'), event.jsonBody, { notify }) }), {
    jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT,
  });
}

/** Subjects one `POST /v1/gold-sets` may add: each is a few record writes, and the request must finish well within the API's timeout. */
export const GOLD_SET_SUBJECTS_PER_REQUEST = 100;

/** What makes two gold-set requests the same set: its judge, label ids, two-person share and description. */
function goldSetDefinition(set: { judge: string; labels: readonly string[]; twoPersonFraction: number; description?: string | undefined }): string {
  return canonicalJson({ judge: set.judge, labels: [...new Set(set.labels)].sort(), twoPersonFraction: set.twoPersonFraction, description: set.description ?? null });
}

/**
 * `POST /v1/gold-sets` `{ name, judge, labels, twoPersonFraction?, description?, subjects? }`: 201 with the set and
 * how many subjects were queued. At most `GOLD_SET_SUBJECTS_PER_REQUEST` subjects per request (a 400 naming
 * `subjects` beyond: send the rest in later requests). Resumable: posting a set that exists with the same definition
 * (judge, labels, two-person share, description) queues the subjects not queued yet and answers 200 (a retry after a
 * timeout finishes the job); a different definition under the name is a 409.
 *
 * @example
 * // POST /v1/gold-sets { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration'], subjects: first100 } → 201 { added: 100 }
 * // POST /v1/gold-sets { name: 'fm-gold', judge: 'fm-judge', labels: ['mode:scope-calibration'], subjects: next100 } → 200 { added: 100 }
 */
export function makePostGoldSetHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const body = event.jsonBody as { subjects?: unknown } | undefined;
      if (Array.isArray(body?.subjects) && body.subjects.length > GOLD_SET_SUBJECTS_PER_REQUEST) {
        throw new ValidationError(`At most ${GOLD_SET_SUBJECTS_PER_REQUEST} subjects per request; post the rest with the same definition again`, [
          { path: 'subjects', message: `at most ${GOLD_SET_SUBJECTS_PER_REQUEST} per request (got ${body.subjects.length})` },
        ]);
      }
      try {
        return { statusCode: 201, body: await createGoldSet(ports, event.jsonBody) };
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // The name exists: the same definition again (a retry, or the next batch of subjects) adds what is not queued yet.
        const request = GoldSetRequest.parse(event.jsonBody); // createGoldSet validated it before it found the name taken
        const existing = await getGoldSet(ports, request.name);
        if (goldSetDefinition(existing) !== goldSetDefinition(request)) throw error;
        const added = request.subjects && request.subjects.length > 0 ? (await addToGoldSet(ports, request.name, { subjects: request.subjects })).added : 0;
        return { statusCode: 200, body: { goldSet: existing, added } };
      }
    },
    { jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT },
  );
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
 * `kind`. A prompted judge runs the model its definition names (`judgeModelOf`): a version whose model is not a
 * runnable spec is a 400 naming `model`. Calibration over HTTP suits small gold sets (the API's timeout bounds it);
 * large ones go through the derivation workflow or `flywheel judges calibrate` against the local runtime.
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

/**
 * The model a judge version's definition names, built here: the configured judge model (`FLYWHEEL_JUDGE_MODEL`)
 * when the definition names that spec (or that model's id), else one built from the definition's spec. A version
 * whose model this deployment cannot run is refused (400 naming `model`): a report is stored under the version, so it
 * must come from the model the version's hash names, never from a stand-in.
 */
export function judgeModelOf(spec: string, env: NodeJS.ProcessEnv = process.env): ModelsPort {
  const configured = env[JUDGE_MODEL_ENV]?.trim();
  if (configured) {
    const model = configured === spec ? createModel(configured, { env }) : undefined;
    if (model) return model;
    try {
      const envModel = createModel(configured, { env });
      if (envModel.id === spec) return envModel;
    } catch {
      // A configured spec that is not runnable does not make the definition's model runnable either.
    }
  }
  try {
    return createModel(spec, { env });
  } catch (error) {
    throw new ValidationError(`This judge version's model ${JSON.stringify(spec)} cannot be run here: calibrate a version whose model is a model spec`, [
      {
        path: 'model',
        message: `not a runnable model spec (openai:<model>@<baseUrl> or bedrock:<modelId>)${configured ? ` nor the configured ${JUDGE_MODEL_ENV}` : ''}: ${(error as Error).message}`.slice(0, 500),
      },
    ]);
  }
}

/** `POST /v1/judges/{name}/drift-check` `{ window?, maxDrop?, minN?, version?, dryRun? }`: the check (a drop demotes and notifies). */
export function makeDriftCheckHandler(ports: Ports): HttpApiHandler {
  const notify = noticeDeliveryOptionsFromEnv();
  return httpApi(async (event) => ({ statusCode: 200, body: await checkDrift(ports, param(event, 'name'), (event.jsonBody ?? {}) as object, notify) }), {
    jsonBodyMaxBytes: ANNOTATION_BODY_LIMIT,
  });
}
