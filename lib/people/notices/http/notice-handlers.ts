/**
 * Notices over HTTP: list them (read), read one (read), acknowledge one (admin), answer a decision's action (admin,
 * which runs the operation through `performDecision` and resolves the notice; the Slack message loses its buttons).
 * The caller's API key id (`key:<id>`) is who acknowledged or answered, unless the body names someone.
 *
 * @example
 * routes.push({ method: 'GET', path: '/v1/notices', operationId: 'listNotices', …, make: makeListNoticesHandler });
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../../api/http-api.ts';
import { principalOfContext } from '../../../auth/authorize-request.ts';
import type { Ports } from '../../../ports/ports.ts';
import { parseInput } from '../../../shared/parse-input.ts';
import { performDecision } from '../../decisions/perform-decision.ts';
import { answerNotice, type PerformDecision } from '../answer-notice.ts';
import { noticeDeliveryOptionsFromEnv, updateNoticeMessage, type NoticeDeliveryOptions } from '../deliver-notice.ts';
import { acknowledgeNotice, getNotice, listNotices } from '../notice-store.ts';
import { AcknowledgeNoticeBody, ListNoticesQuery } from '../schemas.ts';

/** Bytes of an acknowledgement or an answer (a name of at most 128 characters). */
export const NOTICE_BODY_LIMIT = 4 * 1024;

export const NoticeParams = z.strictObject({ id: z.string().regex(/^n-[0-9a-z]{9}-[0-9a-f]{8}$/, 'a notice id (n-<9 base36>-<8 hex>)') });
export const NoticeActionParams = NoticeParams.extend({ actionId: z.string().regex(/^[a-z0-9-]{1,32}$/, 'an action id (a-z, 0-9, -)') });
export const NoticesQuery = z.strictObject(ListNoticesQuery.shape);
export const AnswerNoticeBody = AcknowledgeNoticeBody;

/** Who asked: `key:<keyId>` of the API key, or `api` when the context carries none. */
function actorOf(event: APIGatewayProxyEvent): string {
  const keyId = principalOfContext(event.requestContext?.authorizer)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `key:${keyId}` : 'api';
}

function bodyOf(event: APIGatewayProxyEvent & { jsonBody?: unknown }): z.infer<typeof AcknowledgeNoticeBody> {
  return parseInput(AcknowledgeNoticeBody.strict(), event.jsonBody ?? {}, 'body');
}

/** `GET /v1/notices?status=&kind=&severity=&limit=&cursor=`: newest first. */
export function makeListNoticesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const query = parseInput(NoticesQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listNotices(ports.records, query) };
  });
}

/** `GET /v1/notices/{id}`: 200 with the notice, 404 when there is none. */
export function makeGetNoticeHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(NoticeParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: { notice: await getNotice(ports.records, id) } };
  });
}

/** `POST /v1/notices/{id}/ack` `{ by? }`: 200 with the notice (acknowledged; unchanged when it was already). */
export function makeAcknowledgeNoticeHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { id } = parseInput(NoticeParams, event.pathParameters ?? {}, 'path');
      const body = bodyOf(event);
      return { statusCode: 200, body: { notice: await acknowledgeNotice(ports.records, id, body.by ?? actorOf(event), ports.now()) } };
    },
    { jsonBodyMaxBytes: NOTICE_BODY_LIMIT },
  );
}

/**
 * `POST /v1/notices/{id}/actions/{actionId}` `{ by? }`: 200 with the resolved notice and the operation's outcome; 409
 * when it was answered already, 404 for an action it does not offer.
 */
export function makeAnswerNoticeHandler(
  ports: Ports,
  perform: PerformDecision = performDecision,
  delivery: () => NoticeDeliveryOptions = () => noticeDeliveryOptionsFromEnv(),
): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { id, actionId } = parseInput(NoticeActionParams, event.pathParameters ?? {}, 'path');
      const body = bodyOf(event);
      const answered = await answerNotice(ports, id, actionId, body.by ?? actorOf(event), perform);
      await updateNoticeMessage(answered.notice, delivery());
      return { statusCode: 200, body: answered };
    },
    { jsonBodyMaxBytes: NOTICE_BODY_LIMIT },
  );
}
