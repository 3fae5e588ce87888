/**
 * OpenAPI descriptions of the judges routes, by operationId, from the schemas that validate them (merged into
 * `OPERATIONS` of `lib/api/openapi.ts`). Other parts of the judges capability add their operations here too.
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import {
  CalibrationListSchema,
  JudgeDetailSchema,
  JudgeListSchema,
  JudgeNameParams,
  ListCalibrationsQuery,
  ListJudgesQuery,
  PromoteJudgeBodySchema,
  PromoteJudgeResultSchema,
  RegisterJudgeInputSchema,
  RegisterJudgeResultSchema,
  RetireJudgeBodySchema,
  StatusChangeResultSchema,
} from '../registry/schemas.ts';
import { DerivationReportSchema, DerivationSchema } from '../derive/schemas.ts';
import { DerivationParams, GetDerivationQuery, ListDerivationsQuery } from './derivation-handlers.ts';
import { JUDGE_ACTION_BODY_LIMIT, REGISTER_JUDGE_BODY_LIMIT } from './registry-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

export const JUDGES_OPERATIONS: Record<string, OperationDoc> = {
  listJudgeDerivations: {
    summary: 'Judge derivations started by registering a top checkpoint, newest first',
    request: { query: ListDerivationsQuery },
    responses: { 200: json(z.object({ items: z.array(DerivationSchema), cursor: z.string().optional() }), 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  getJudgeDerivation: {
    summary: 'One derivation and its report: each derived judge against its teacher and against people, cost, promotion',
    request: { params: DerivationParams, query: GetDerivationQuery },
    responses: { 200: json(z.object({ derivation: DerivationSchema, report: DerivationReportSchema.optional() }), 'The derivation; `report` once it finished.'), 404: errorDoc('No such derivation.'), ...READ_ERRORS },
  },
  listJudges: {
    summary: 'Registered judges by name: kind, promoted version, acceptance rule',
    request: { query: ListJudgesQuery },
    responses: { 200: json(JudgeListSchema, 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
  getJudge: {
    summary: "One judge: every version (definition, identity, status, promotion), which is promoted, each version's latest calibration",
    request: { params: JudgeNameParams },
    responses: { 200: json(JudgeDetailSchema, 'The judge.'), 404: errorDoc('No judge of this name.'), ...READ_ERRORS },
  },
  registerJudge: {
    summary: 'Register a judge definition; its version is the hash of model, prompt, rubric, decoding, output schema and taxonomy version',
    request: { body: { required: true, content: { 'application/json': { schema: RegisterJudgeInputSchema } } } },
    responses: {
      201: json(RegisterJudgeResultSchema, 'A new version, status candidate.'),
      200: json(RegisterJudgeResultSchema, 'This definition was registered before (the same version).'),
      ...READ_ERRORS,
      ...bodyErrors(REGISTER_JUDGE_BODY_LIMIT),
    },
  },
  promoteJudge: {
    summary: "Promote a version (gated by the judge's acceptance rule on its latest calibration report against the incumbent's; force with a reason overrides); publishes judge.promoted",
    request: { params: JudgeNameParams, body: { required: true, content: { 'application/json': { schema: PromoteJudgeBodySchema } } } },
    responses: {
      200: json(PromoteJudgeResultSchema, 'Promoted (changed: false when it already was).'),
      404: errorDoc('No such judge or version.'),
      409: errorDoc('Refused by the acceptance rule (the message gives the reasons), retired, or another promotion won the race.'),
      ...READ_ERRORS,
      ...bodyErrors(JUDGE_ACTION_BODY_LIMIT),
    },
  },
  retireJudge: {
    summary: 'Retire a version (never promoted again; retiring the promoted one demotes it and publishes judge.demoted)',
    request: { params: JudgeNameParams, body: { required: true, content: { 'application/json': { schema: RetireJudgeBodySchema } } } },
    responses: {
      200: json(StatusChangeResultSchema, 'Retired (changed: false when it already was).'),
      404: errorDoc('No such judge or version.'),
      409: errorDoc('Another promotion or demotion won the race; read again.'),
      ...READ_ERRORS,
      ...bodyErrors(JUDGE_ACTION_BODY_LIMIT),
    },
  },
  listJudgeCalibrations: {
    summary: "A judge's calibration reports (of one version with `version`), newest first",
    request: { params: JudgeNameParams, query: ListCalibrationsQuery },
    responses: { 200: json(CalibrationListSchema, 'A page; pass `cursor` for the next.'), ...READ_ERRORS },
  },
};
