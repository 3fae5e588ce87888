import { makeGetFeedbackHandler } from '../feedback/http/get-feedback.ts';
import { makeListFeedbackHandler } from '../feedback/http/list-feedback.ts';
import { makePostFeedbackHandler } from '../feedback/http/post-feedback.ts';
import { makePostReportHandler } from '../feedback/http/post-report.ts';
import { makeGetOpenApiHandler } from './http/get-openapi.ts';
import { makeListCheckpointsHandler } from '../registry/http/list-checkpoints.ts';
import { makeListResultsHandler } from '../registry/http/list-results.ts';
import { makeListSuitesHandler } from '../registry/http/list-suites.ts';
import { makeGetSuiteHandler } from '../registry/http/get-suite.ts';
import { makePostSuiteHandler } from '../registry/http/post-suite.ts';
import { makeRetireSuiteHandler } from '../registry/http/retire-suite.ts';
import { makePostCheckpointHandler } from '../registry/http/post-checkpoint.ts';
import { makeGetSweepHandler } from '../sweeps/http/get-sweep.ts';
import { makePostSweepHandler } from '../sweeps/http/post-sweep.ts';
import { makeApproveEvalDraftHandler, makeListEvalDraftsHandler, makePostEvalDraftHandler } from '../modes/http/eval-drafts.ts';
import { makeGetFailureModesHandler } from '../modes/http/get-failure-modes.ts';
import { makeListClustersHandler } from '../modes/http/list-clusters.ts';
import { makePromoteClusterHandler } from '../modes/http/promote-cluster.ts';
import { makeListModeExamplesHandler } from '../modes/http/list-mode-examples.ts';
import { makeListReviewQueueHandler, makePostReviewLabelHandler } from '../modes/http/review-queue.ts';
import {
  makeGetJudgeHandler,
  makeListCalibrationsHandler,
  makeListJudgesHandler,
  makePromoteJudgeHandler,
  makeRegisterJudgeHandler,
  makeRetireJudgeHandler,
} from '../judges/http/registry-handlers.ts';
import {
  makeCalibrateJudgeHandler,
  makeDriftCheckHandler,
  makeGetGoldSetHandler,
  makeListAnnotationsHandler,
  makePostAnnotationHandler,
  makePostAnnotationLabelsHandler,
  makePostGoldSetHandler,
} from '../judges/http/annotation-handlers.ts';
import { makeGetDerivationHandler, makeListDerivationsHandler } from '../judges/http/derivation-handlers.ts';
import {
  makeGetTrainingCurvesHandler,
  makeGetTrainingRunHandler,
  makeListTrainingRunsHandler,
  makePostTrainingRunHandler,
  makeResumeTrainingRunHandler,
  makeStopTrainingRunHandler,
} from '../training/http/training-run-handlers.ts';
import { makeExtractDecisionsHandler, makeGetDecisionHandler, makeListDecisionsHandler } from '../training/http/decision-handlers.ts';
import {
  makeCreateExperimentHandler,
  makeGetExperimentHandler,
  makeListExperimentsHandler,
  makeStartExperimentHandler,
  makeStopExperimentHandler,
} from '../experiments/http/lifecycle-handlers.ts';
import { makeAssignUnitsHandler } from '../experiments/http/assignment-handler.ts';
import { makeAnalyzeExperimentHandler, makeGetExperimentLiftChartHandler, makeListExperimentAnalysesHandler } from '../experiments/http/analysis-handlers.ts';
import { makeDecideExperimentHandler } from '../experiments/http/decision-handlers.ts';
import { makeGetIncumbentHandler } from '../registry/http/get-incumbent.ts';
import {
  makeListMetricDefinitionsHandler,
  makePostExposuresHandler,
  makePostMetricsHandler,
  makePutMetricDefinitionHandler,
} from '../experiments/http/ingest-handlers.ts';
// import console: files
import { makeGetConsoleAssetHandler, makeGetConsoleHandler } from '../console/http/console-assets.ts';
// import console: data
import { makeGetAttemptHandler, makeListAttemptsHandler } from '../registry/http/attempt-handlers.ts';
import { makeListSweepsHandler } from '../sweeps/http/list-sweeps.ts';
import { makeGetOverviewHandler } from '../overview/http/get-overview.ts';
import { makeGetFailureModeTimelineHandler } from '../modes/http/get-failure-mode-timeline.ts';
// import people: slack
import { makeSlackCommandsHandler, makeSlackInteractionsHandler } from '../people/slack/http/slack-handlers.ts';
// import people: notices
import { makeAcknowledgeNoticeHandler, makeAnswerNoticeHandler, makeGetNoticeHandler, makeListNoticesHandler } from '../people/notices/http/notice-handlers.ts';
// import compute: usage and budgets
import { makeGetComputeUsageHandler, makeListComputeBudgetsHandler, makeListJobsHandler, makePutComputeBudgetHandler } from '../compute/http/compute-handlers.ts';
// import cli: registry reads
import { makeGetCheckpointHandler } from '../registry/http/get-checkpoint.ts';
import { makeGetSweepProgressHandler } from '../sweeps/http/get-sweep-progress.ts';
import type { RouteSpec } from './route.ts';

/**
 * The single route table: the API stack makes API Gateway methods from it, the local server and the Lambda
 * entries dispatch on it (`makeDispatcher`), and the OpenAPI document describes it.
 */
export const routes: RouteSpec[] = [
  { method: 'POST', path: '/v1/feedback', operationId: 'postFeedback', lambda: 'feedback/ingest', apiKeyRequired: true, scope: 'ingest', make: makePostFeedbackHandler },
  { method: 'POST', path: '/v1/reports', operationId: 'postReport', lambda: 'feedback/ingest', apiKeyRequired: true, scope: 'ingest', make: makePostReportHandler },
  { method: 'GET', path: '/v1/feedback/{eventId}', operationId: 'getFeedback', lambda: 'feedback/query', apiKeyRequired: true, scope: 'read', make: makeGetFeedbackHandler },
  { method: 'GET', path: '/v1/feedback', operationId: 'listFeedback', lambda: 'feedback/query', apiKeyRequired: true, scope: 'read', make: makeListFeedbackHandler },
  { method: 'GET', path: '/v1/openapi.json', operationId: 'getOpenApi', lambda: 'api/openapi', apiKeyRequired: true, scope: 'read', make: () => makeGetOpenApiHandler(routes) },
  { method: 'POST', path: '/v1/checkpoints', operationId: 'postCheckpoint', lambda: 'registry/api', apiKeyRequired: true, scope: 'admin', make: makePostCheckpointHandler },
  { method: 'GET', path: '/v1/checkpoints', operationId: 'listCheckpoints', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeListCheckpointsHandler },
  { method: 'GET', path: '/v1/suites', operationId: 'listSuites', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeListSuitesHandler },
  { method: 'POST', path: '/v1/suites', operationId: 'postSuite', lambda: 'registry/api', apiKeyRequired: true, scope: 'admin', make: makePostSuiteHandler },
  { method: 'GET', path: '/v1/suites/{id}', operationId: 'getSuite', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeGetSuiteHandler },
  { method: 'POST', path: '/v1/suites/{id}/retire', operationId: 'retireSuite', lambda: 'registry/api', apiKeyRequired: true, scope: 'admin', make: makeRetireSuiteHandler },
  { method: 'GET', path: '/v1/results', operationId: 'listResults', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeListResultsHandler },
  { method: 'POST', path: '/v1/sweeps', operationId: 'postSweep', lambda: 'registry/sweeps-api', apiKeyRequired: true, scope: 'admin', make: makePostSweepHandler },
  { method: 'GET', path: '/v1/sweeps/{id}', operationId: 'getSweep', lambda: 'registry/sweeps-api', apiKeyRequired: true, scope: 'read', make: makeGetSweepHandler },
  { method: 'GET', path: '/v1/failure-modes', operationId: 'getFailureModes', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeGetFailureModesHandler },
  { method: 'GET', path: '/v1/failure-modes/{mode}/examples', operationId: 'listModeExamples', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeListModeExamplesHandler },
  { method: 'GET', path: '/v1/review-queue', operationId: 'listReviewQueue', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeListReviewQueueHandler },
  { method: 'POST', path: '/v1/review-queue/{id}/label', operationId: 'postReviewLabel', lambda: 'modes/query', apiKeyRequired: true, scope: 'admin', make: makePostReviewLabelHandler },
  { method: 'GET', path: '/v1/clusters', operationId: 'listClusters', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeListClustersHandler },
  { method: 'POST', path: '/v1/clusters/{id}/promote', operationId: 'promoteCluster', lambda: 'modes/query', apiKeyRequired: true, scope: 'admin', make: makePromoteClusterHandler },
  { method: 'POST', path: '/v1/eval-drafts', operationId: 'postEvalDraft', lambda: 'modes/query', apiKeyRequired: true, scope: 'admin', make: makePostEvalDraftHandler },
  { method: 'GET', path: '/v1/eval-drafts', operationId: 'listEvalDrafts', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeListEvalDraftsHandler },
  { method: 'POST', path: '/v1/eval-drafts/{id}/approve', operationId: 'approveEvalDraft', lambda: 'modes/query', apiKeyRequired: true, scope: 'admin', make: makeApproveEvalDraftHandler },
  { method: 'GET', path: '/v1/judges', operationId: 'listJudges', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeListJudgesHandler },
  { method: 'POST', path: '/v1/judges', operationId: 'registerJudge', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makeRegisterJudgeHandler },
  { method: 'GET', path: '/v1/judges/{name}', operationId: 'getJudge', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeGetJudgeHandler },
  { method: 'POST', path: '/v1/judges/{name}/promote', operationId: 'promoteJudge', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makePromoteJudgeHandler },
  { method: 'POST', path: '/v1/judges/{name}/retire', operationId: 'retireJudge', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makeRetireJudgeHandler },
  { method: 'GET', path: '/v1/judges/{name}/calibrations', operationId: 'listJudgeCalibrations', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeListCalibrationsHandler },
  { method: 'GET', path: '/v1/annotations', operationId: 'listAnnotations', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeListAnnotationsHandler },
  { method: 'POST', path: '/v1/annotations', operationId: 'postAnnotation', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makePostAnnotationHandler },
  { method: 'POST', path: '/v1/annotations/{id}/labels', operationId: 'postAnnotationLabels', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makePostAnnotationLabelsHandler },
  { method: 'POST', path: '/v1/gold-sets', operationId: 'postGoldSet', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makePostGoldSetHandler },
  { method: 'GET', path: '/v1/gold-sets/{name}', operationId: 'getGoldSet', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeGetGoldSetHandler },
  { method: 'POST', path: '/v1/judges/{name}/calibrate', operationId: 'calibrateJudge', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makeCalibrateJudgeHandler },
  { method: 'POST', path: '/v1/judges/{name}/drift-check', operationId: 'checkJudgeDrift', lambda: 'judges/api', apiKeyRequired: true, scope: 'admin', make: makeDriftCheckHandler },
  { method: 'GET', path: '/v1/judge-derivations', operationId: 'listJudgeDerivations', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeListDerivationsHandler },
  { method: 'GET', path: '/v1/judge-derivations/{id}', operationId: 'getJudgeDerivation', lambda: 'judges/api', apiKeyRequired: true, scope: 'read', make: makeGetDerivationHandler },
  { method: 'POST', path: '/v1/training-runs', operationId: 'postTrainingRun', lambda: 'training/api', apiKeyRequired: true, scope: 'admin', make: makePostTrainingRunHandler },
  { method: 'GET', path: '/v1/training-runs', operationId: 'listTrainingRuns', lambda: 'training/api', apiKeyRequired: true, scope: 'read', make: makeListTrainingRunsHandler },
  { method: 'GET', path: '/v1/training-runs/{runId}', operationId: 'getTrainingRun', lambda: 'training/api', apiKeyRequired: true, scope: 'read', make: makeGetTrainingRunHandler },
  { method: 'GET', path: '/v1/training-runs/{runId}/curves', operationId: 'getTrainingCurves', lambda: 'training/api', apiKeyRequired: true, scope: 'read', make: makeGetTrainingCurvesHandler },
  { method: 'POST', path: '/v1/training-runs/{runId}/stop', operationId: 'stopTrainingRun', lambda: 'training/api', apiKeyRequired: true, scope: 'admin', make: makeStopTrainingRunHandler },
  { method: 'POST', path: '/v1/training-runs/{runId}/resume', operationId: 'resumeTrainingRun', lambda: 'training/api', apiKeyRequired: true, scope: 'admin', make: makeResumeTrainingRunHandler },
  { method: 'GET', path: '/v1/decisions', operationId: 'listDecisions', lambda: 'training/api', apiKeyRequired: true, scope: 'read', make: makeListDecisionsHandler },
  { method: 'GET', path: '/v1/decisions/{decisionId}', operationId: 'getDecision', lambda: 'training/api', apiKeyRequired: true, scope: 'read', make: makeGetDecisionHandler },
  // experiments: ingest (metrics, exposures, metric definitions)
  { method: 'POST', path: '/v1/metrics', operationId: 'postMetrics', lambda: 'feedback/ingest', apiKeyRequired: true, scope: 'ingest', make: makePostMetricsHandler },
  { method: 'POST', path: '/v1/exposures', operationId: 'postExposures', lambda: 'feedback/ingest', apiKeyRequired: true, scope: 'ingest', make: makePostExposuresHandler },
  { method: 'POST', path: '/v1/metric-definitions', operationId: 'putMetricDefinition', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makePutMetricDefinitionHandler },
  { method: 'GET', path: '/v1/metric-definitions', operationId: 'listMetricDefinitions', lambda: 'experiments/api', apiKeyRequired: true, scope: 'read', make: makeListMetricDefinitionsHandler },
  // experiments: lifecycle and assignment
  { method: 'POST', path: '/v1/experiments', operationId: 'createExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makeCreateExperimentHandler },
  { method: 'GET', path: '/v1/experiments', operationId: 'listExperiments', lambda: 'experiments/api', apiKeyRequired: true, scope: 'read', make: makeListExperimentsHandler },
  { method: 'GET', path: '/v1/experiments/{id}', operationId: 'getExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'read', make: makeGetExperimentHandler },
  { method: 'POST', path: '/v1/experiments/{id}/start', operationId: 'startExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makeStartExperimentHandler },
  { method: 'POST', path: '/v1/experiments/{id}/stop', operationId: 'stopExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makeStopExperimentHandler },
  { method: 'POST', path: '/v1/assignments', operationId: 'assignUnits', lambda: 'experiments/assign', apiKeyRequired: true, scope: 'ingest', make: makeAssignUnitsHandler },
  // experiments: analysis
  { method: 'POST', path: '/v1/experiments/{id}/analyze', operationId: 'analyzeExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makeAnalyzeExperimentHandler },
  { method: 'GET', path: '/v1/experiments/{id}/analyses', operationId: 'listExperimentAnalyses', lambda: 'experiments/api', apiKeyRequired: true, scope: 'read', make: makeListExperimentAnalysesHandler },
  { method: 'GET', path: '/v1/experiments/{id}/lift/{metric}', operationId: 'getExperimentLiftChart', lambda: 'experiments/api', apiKeyRequired: true, scope: 'read', make: makeGetExperimentLiftChartHandler },
  // experiments: decisions and incumbent
  { method: 'POST', path: '/v1/experiments/{id}/decide', operationId: 'decideExperiment', lambda: 'experiments/api', apiKeyRequired: true, scope: 'admin', make: makeDecideExperimentHandler },
  { method: 'GET', path: '/v1/incumbent', operationId: 'getIncumbent', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeGetIncumbentHandler },
  { method: 'POST', path: '/v1/decisions/extract', operationId: 'extractDecisions', lambda: 'training/api', apiKeyRequired: true, scope: 'admin', make: makeExtractDecisionsHandler },
  // console: files
  { method: 'GET', path: '/', operationId: 'getConsole', lambda: 'console/assets', apiKeyRequired: false, scope: 'read', make: makeGetConsoleHandler },
  { method: 'GET', path: '/console/{asset}', operationId: 'getConsoleAsset', lambda: 'console/assets', apiKeyRequired: false, scope: 'read', make: makeGetConsoleAssetHandler },
  // console: data (attempts, jobs, sweeps, overview, mode timeline)
  { method: 'GET', path: '/v1/attempts', operationId: 'listAttempts', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeListAttemptsHandler },
  { method: 'GET', path: '/v1/attempts/{id}', operationId: 'getAttempt', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeGetAttemptHandler },
  { method: 'GET', path: '/v1/sweeps', operationId: 'listSweeps', lambda: 'registry/sweeps-api', apiKeyRequired: true, scope: 'read', make: makeListSweepsHandler },
  { method: 'GET', path: '/v1/overview', operationId: 'getLoopOverview', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeGetOverviewHandler },
  { method: 'GET', path: '/v1/failure-modes/timeline', operationId: 'getFailureModeTimeline', lambda: 'modes/query', apiKeyRequired: true, scope: 'read', make: makeGetFailureModeTimelineHandler },
  // people: slack
  { method: 'POST', path: '/v1/slack/commands', operationId: 'postSlackCommand', lambda: 'people/slack', apiKeyRequired: false, scope: 'read', make: (ports) => makeSlackCommandsHandler(ports) },
  { method: 'POST', path: '/v1/slack/interactions', operationId: 'postSlackInteraction', lambda: 'people/slack', apiKeyRequired: false, scope: 'read', make: (ports) => makeSlackInteractionsHandler(ports) },
  // people: notices
  { method: 'GET', path: '/v1/notices', operationId: 'listNotices', lambda: 'people/api', apiKeyRequired: true, scope: 'read', make: makeListNoticesHandler },
  { method: 'GET', path: '/v1/notices/{id}', operationId: 'getNotice', lambda: 'people/api', apiKeyRequired: true, scope: 'read', make: makeGetNoticeHandler },
  { method: 'POST', path: '/v1/notices/{id}/ack', operationId: 'acknowledgeNotice', lambda: 'people/api', apiKeyRequired: true, scope: 'admin', make: makeAcknowledgeNoticeHandler },
  { method: 'POST', path: '/v1/notices/{id}/actions/{actionId}', operationId: 'answerNotice', lambda: 'people/api', apiKeyRequired: true, scope: 'admin', make: (ports) => makeAnswerNoticeHandler(ports) },
  // compute: usage and budgets
  { method: 'GET', path: '/v1/jobs', operationId: 'listJobs', lambda: 'compute/api', apiKeyRequired: true, scope: 'read', make: makeListJobsHandler },
  { method: 'GET', path: '/v1/compute/usage', operationId: 'getComputeUsage', lambda: 'compute/api', apiKeyRequired: true, scope: 'read', make: makeGetComputeUsageHandler },
  { method: 'GET', path: '/v1/compute/budgets', operationId: 'listComputeBudgets', lambda: 'compute/api', apiKeyRequired: true, scope: 'read', make: makeListComputeBudgetsHandler },
  { method: 'POST', path: '/v1/compute/budgets', operationId: 'putComputeBudget', lambda: 'compute/api', apiKeyRequired: true, scope: 'admin', make: makePutComputeBudgetHandler },
  // cli: registry reads
  { method: 'GET', path: '/v1/checkpoints/{id}', operationId: 'getCheckpoint', lambda: 'registry/api', apiKeyRequired: true, scope: 'read', make: makeGetCheckpointHandler },
  { method: 'GET', path: '/v1/sweeps/{id}/shards', operationId: 'getSweepProgress', lambda: 'registry/sweeps-api', apiKeyRequired: true, scope: 'read', make: makeGetSweepProgressHandler },
];

/** The routes one Lambda function serves (`functions/<lambda>.ts`). */
export function routesOf(lambda: string): RouteSpec[] {
  return routes.filter((r) => r.lambda === lambda);
}
