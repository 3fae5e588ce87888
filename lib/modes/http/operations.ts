/** OpenAPI descriptions of the failure-mode routes (merged into `OPERATIONS` of `lib/api/openapi.ts`). */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { ClustersQuery } from '../clusters/cluster-comments.ts';
import { HumanLabelInput } from '../label-signal.ts';
import { ModeExamplesQuery } from '../list-mode-examples.ts';
import { ReviewQueueQuery } from '../list-review-queue.ts';
import { FailureModesQuery } from '../query-failure-modes.ts';
import { LABEL_BODY_LIMIT } from './review-queue.ts';
import { ApproveRequest } from '../evals/approve-eval-draft.ts';
import { DraftRequest } from '../evals/eval-drafts.ts';
import { DRAFT_BODY_LIMIT } from './eval-drafts.ts';
import { PromoteClusterRequest } from '../taxonomy/promote-cluster.ts';
import { PROMOTE_BODY_LIMIT } from './promote-cluster.ts';

const obj = (description: string) => ({ description, content: { 'application/json': { schema: z.object({}).passthrough() } } });

export const MODES_OPERATIONS: Record<string, OperationDoc> = {
  getFailureModes: {
    summary: 'Failure-mode counts, rates per thousand turns and trend, per checkpoint (several side by side)',
    request: { query: FailureModesQuery },
    responses: { 200: obj('Per checkpoint: totals (ratings, outcomes), modes with rate and trend; comparison for 2+.'), ...READ_ERRORS },
  },
  listModeExamples: {
    summary: 'A mode: definition, newest examples with evidence, eval cases made from it',
    request: { params: z.object({ mode: z.string() }), query: ModeExamplesQuery },
    responses: { 200: obj('Examples, newest first.'), ...READ_ERRORS },
  },
  listReviewQueue: {
    summary: 'Signals waiting for a human label (or done ones)',
    request: { query: ReviewQueueQuery },
    responses: { 200: obj('A page of review items.'), ...READ_ERRORS },
  },
  postReviewLabel: {
    summary: 'Label a signal by hand (overrides the chain; consented signals become training data)',
    request: { params: z.object({ id: z.string() }), body: { required: true, content: { 'application/json': { schema: HumanLabelInput } } } },
    responses: { 200: obj('The stored label.'), 404: errorDoc('No such signal.'), ...READ_ERRORS, ...bodyErrors(LABEL_BODY_LIMIT) },
  },
  listClusters: {
    summary: 'Clusters of comment embeddings; candidate modes (recurring, poorly explained) first',
    request: { query: ClustersQuery },
    responses: { 200: obj('Clusters (HDBSCAN over one embedding model) with counts, trend, top terms, suggested name, members and `membersHash` (name it when promoting).'), 503: errorDoc('No embedding model configured.'), ...READ_ERRORS },
  },
  promoteCluster: {
    summary: 'Promote a cluster into a new taxonomy version as a new mode; its members get it as an unreviewed suggestion',
    request: { params: z.object({ id: z.string() }), body: { required: true, content: { 'application/json': { schema: PromoteClusterRequest } } } },
    responses: { 201: obj('The new taxonomy version, the label mapping from the previous one, the suggested labels.'), 404: errorDoc('No such cluster.'), 409: errorDoc('Already promoted or being promoted, its members changed since `membersHash` was shown, or another revision won.'), ...READ_ERRORS, ...bodyErrors(PROMOTE_BODY_LIMIT) },
  },
  postEvalDraft: {
    summary: 'Draft a judge-graded eval case from a cluster or a report (consented signals only)',
    request: { body: { required: true, content: { 'application/json': { schema: DraftRequest } } } },
    responses: { 201: obj('The pending draft with its lineage.'), 404: errorDoc('No such cluster or report.'), 503: errorDoc('No judge model configured.'), ...READ_ERRORS, ...bodyErrors(DRAFT_BODY_LIMIT) },
  },
  listEvalDrafts: {
    summary: 'Eval drafts, pending or approved',
    request: { query: z.object({ status: z.enum(['pending', 'approved']).optional() }) },
    responses: { 200: obj('Drafts, newest first.'), ...READ_ERRORS },
  },
  approveEvalDraft: {
    summary: 'Approve a draft: it joins a private held-out suite as a harness task',
    request: { params: z.object({ id: z.string() }), body: { required: true, content: { 'application/json': { schema: ApproveRequest } } } },
    responses: { 200: obj('The task and the new suite version.'), 404: errorDoc('No such draft.'), 409: errorDoc('Already approved.'), ...READ_ERRORS, ...bodyErrors(DRAFT_BODY_LIMIT) },
  },
};
