/**
 * OpenAPI descriptions of the notices routes, by operationId (merged into `OPERATIONS` of `lib/api/openapi.ts`).
 */
import { z } from 'zod';
import { bodyErrors, errorDoc, READ_ERRORS, type OperationDoc } from '../../../api/operation-docs.ts';
import { AcknowledgeNoticeBody, NoticePage, NoticeRecord } from '../schemas.ts';
import { NOTICE_BODY_LIMIT, NoticeActionParams, NoticeParams, NoticesQuery } from './notice-handlers.ts';

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });
const One = z.object({ notice: NoticeRecord });
const NOT_FOUND = errorDoc('No notice with this id.');
const body = { required: false, content: { 'application/json': { schema: AcknowledgeNoticeBody } } };

export const NOTICE_OPERATIONS: Record<string, OperationDoc> = {
  listNotices: {
    summary: 'Notices (failures, stalls, decisions, budgets), newest first, by status, kind and severity',
    request: { query: NoticesQuery },
    responses: { 200: json(NoticePage, 'A page; pass `nextCursor` as `cursor` for the next.'), ...READ_ERRORS },
  },
  getNotice: {
    summary: 'One notice: what, why, the link to act, how often it was raised, who saw or answered it, where it went',
    request: { params: NoticeParams },
    responses: { 200: json(One, 'The notice.'), 404: NOT_FOUND, ...READ_ERRORS },
  },
  acknowledgeNotice: {
    summary: 'Acknowledge a notice (a person saw it); repeats still fold in, and are not delivered again',
    request: { params: NoticeParams, body },
    responses: { 200: json(One, 'Acknowledged (unchanged when it was acknowledged or resolved already).'), 404: NOT_FOUND, ...READ_ERRORS, ...bodyErrors(NOTICE_BODY_LIMIT) },
  },
  answerNotice: {
    summary: "Answer a decision notice with one of its actions: the action's operation runs as its own route would, then the notice is resolved",
    request: { params: NoticeActionParams, body },
    responses: {
      200: json(z.object({ notice: NoticeRecord, outcome: z.string() }), 'Done: the resolved notice and what the operation did.'),
      404: errorDoc('No such notice, or no such action on it.'),
      409: errorDoc('Answered already (or the operation refused: e.g. the experiment was decided otherwise).'),
      ...READ_ERRORS,
      ...bodyErrors(NOTICE_BODY_LIMIT),
    },
  },
};
