/**
 * OpenAPI descriptions of the experiment analysis routes, by operationId, from the schemas that validate them (merged
 * into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { ExperimentAnalysisSchema } from '../schemas.ts';
import { AnalysisParams, AnalyzeQuery, LiftChartParams, ListAnalysesQuery } from './analysis-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const NOT_FOUND = errorDoc('No experiment with this id.');

export const ANALYSIS_OPERATIONS: Record<string, OperationDoc> = {
  analyzeExperiment: {
    summary: 'Analyse an experiment now: per-arm values, lifts with fixed and always-valid intervals, CUPED, adjusted p-values, SRM, failure-mode rates, a recommendation',
    description:
      'Reads the raw archive (exposures and metric events) with one SQL query on the engine made for it (Athena on AWS, DuckDB locally): no per-unit data leaves the engine. Units exposed in more than one arm are left out (`excludedUnits`). Stored as a snapshot (listed by GET …/analyses) and drawn into each metric\'s lift chart unless `store=false`.',
    request: { params: AnalysisParams, query: AnalyzeQuery },
    responses: {
      200: json(ExperimentAnalysisSchema, 'The analysis (the notebook form).'),
      404: NOT_FOUND,
      ...READ_ERRORS,
      400: errorDoc('Invalid query, or the experiment is a draft (`issues` names `status`) or the window ends before it started (`to`).'),
      503: errorDoc('This deployment has no query engine over the archive (`Flywheel.QueryNotConfigured`).'),
    },
  },
  listExperimentAnalyses: {
    summary: "An experiment's stored analyses, newest first",
    request: { params: AnalysisParams, query: ListAnalysesQuery },
    responses: { 200: json(z.object({ items: z.array(ExperimentAnalysisSchema) }), 'The newest `limit` analyses.'), 404: NOT_FOUND, ...READ_ERRORS },
  },
  getExperimentLiftChart: {
    summary: "A metric's relative lift per treatment arm over the stored analyses, with its interval (always-valid when the stopping rule is sequential), as a PNG",
    request: { params: LiftChartParams },
    responses: {
      200: { description: 'The chart (send Accept: image/png).', content: { 'image/png': { schema: z.string().meta({ format: 'binary' }) } } },
      404: errorDoc('No experiment with this id, or no analysis has drawn this metric yet.'),
      ...READ_ERRORS,
    },
  },
};
