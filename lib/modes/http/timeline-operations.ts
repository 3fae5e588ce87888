/** OpenAPI description of `GET /v1/failure-modes/timeline`, merged into `OPERATIONS` of `lib/api/openapi.ts`. */
import { READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { FailureModeTimelineQuery, FailureModeTimelineSchema } from '../timeline-schemas.ts';

export const TIMELINE_OPERATIONS: Record<string, OperationDoc> = {
  getFailureModeTimeline: {
    summary: 'Failure modes over time: per checkpoint and day (or week), each mode\'s count and its rate over the classified signals',
    request: { query: FailureModeTimelineQuery },
    responses: { 200: { description: 'The timeline.', content: { 'application/json': { schema: FailureModeTimelineSchema } } }, ...READ_ERRORS },
  },
};
