/**
 * OpenAPI descriptions of the annotation, gold-set, calibration and drift-check routes, by operationId, from the
 * schemas that validate them (merged into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { AnnotationItemSchema, GoldSetSchema } from '../annotation/annotation-item.ts';
import { AnnotationsQuery, EnqueueRequest, LabelRequest } from '../annotation/annotation-queue.ts';
import { GoldSetRequest, GoldSetSubjectRequest } from '../annotation/gold-sets.ts';
import { DriftCheckOptions } from '../drift/check-drift.ts';
import { CalibrationReportSchema } from '../schemas.ts';
import { ANNOTATION_BODY_LIMIT, CalibrateRequest } from './annotation-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const body = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema } } });
const Enqueued = z.object({ item: AnnotationItemSchema, created: z.boolean() });
const LabelIdParams = z.object({ id: z.string() });
const NameParams = z.object({ name: z.string() });

export const ANNOTATION_OPERATIONS: Record<string, OperationDoc> = {
  listAnnotations: {
    summary: 'Annotation items, newest first: by queue, by reason, pending or done',
    request: { query: AnnotationsQuery },
    responses: { 200: json(z.object({ items: z.array(AnnotationItemSchema), cursor: z.string().optional() }), 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  postAnnotation: {
    summary: 'Queue a subject (attempt, signal, pair) for people to label, into a queue or a gold set',
    request: { body: body(z.union([EnqueueRequest, GoldSetSubjectRequest])) },
    responses: {
      201: json(Enqueued, 'Queued.'),
      200: json(Enqueued, 'Already queued (the same subject in the same queue is one item).'),
      404: errorDoc('No such gold set.'),
      ...READ_ERRORS,
      ...bodyErrors(ANNOTATION_BODY_LIMIT),
    },
  },
  postAnnotationLabels: {
    summary: 'Label an item (every asked label id; modes not named are `no`); a drift item also runs the drift check',
    request: { params: LabelIdParams, body: body(LabelRequest) },
    responses: {
      200: json(z.object({ item: AnnotationItemSchema, drift: z.object({}).passthrough().optional() }), 'The item (done when it has what it needs).'),
      400: errorDoc('A label not asked for or out of its vocabulary: `issues` names `labels.<id>`.'),
      404: errorDoc('No such item.'),
      409: errorDoc('This person labelled the item already, or it is done.'),
      ...READ_ERRORS,
      ...bodyErrors(ANNOTATION_BODY_LIMIT),
    },
  },
  postGoldSet: {
    summary: 'Create a gold set for a judge (its label ids, the two-person fraction) and queue its subjects',
    request: { body: body(GoldSetRequest) },
    responses: { 201: json(z.object({ goldSet: GoldSetSchema, added: z.number() }), 'Created.'), 409: errorDoc('The name is taken.'), ...READ_ERRORS, ...bodyErrors(ANNOTATION_BODY_LIMIT) },
  },
  getGoldSet: {
    summary: 'A gold set: its label ids and how many items are pending, done and double-labelled',
    request: { params: NameParams },
    responses: { 200: json(z.object({ goldSet: GoldSetSchema, pending: z.number(), done: z.number(), twoPerson: z.number() }), 'The gold set.'), 404: errorDoc('No such gold set.'), ...READ_ERRORS },
  },
  calibrateJudge: {
    summary: "Calibrate a judge version on a gold set (rubric judges on attempts, pairwise judges on pairs, failure-mode judges on signals, reward models): agreement with people, stored as the version's report",
    request: { params: NameParams, body: body(CalibrateRequest) },
    responses: {
      200: json(CalibrationReportSchema, 'The stored calibration report.'),
      400: errorDoc('Invalid request, a gold set of subjects the judge does not read (`kind`), or a gold set without labelled items.'),
      404: errorDoc('No such judge, version or gold set.'),
      503: errorDoc('No judge model configured.'),
      ...READ_ERRORS,
      ...bodyErrors(ANNOTATION_BODY_LIMIT),
    },
  },
  checkJudgeDrift: {
    summary: "Kappa on the rolling window of people's labels of production verdicts; a drop demotes the judge and tells people",
    request: { params: NameParams, body: { required: false, content: { 'application/json': { schema: DriftCheckOptions } } } },
    responses: { 200: json(z.object({}).passthrough(), 'The check: status, per label id kappa against the calibration, demoted, notified.'), 404: errorDoc('No such judge.'), ...READ_ERRORS, ...bodyErrors(ANNOTATION_BODY_LIMIT) },
  },
};
