import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { getFeedback } from '../get-feedback.ts';
import { EventIdParams } from '../schemas.ts';

/** `GET /v1/feedback/{eventId}`: the stored event, whether it is current, and its feedbackKey's history; 404 otherwise. */
export function makeGetFeedbackHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const params = EventIdParams.safeParse(event.pathParameters ?? {});
    if (!params.success) throw new ValidationError('Invalid path', toFieldIssues(params.error.issues));
    return { statusCode: 200, body: await getFeedback(ports, params.data.eventId) };
  });
}
