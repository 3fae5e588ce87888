import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { suiteView } from '../record-views.ts';
import { registerSuite } from '../register-suite.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { SuiteInput } from '../schemas.ts';
import { checkApiSuite, taskSourcesFromEnv } from '../task-sources.ts';

/**
 * Body limit of `POST /v1/suites`: the task id list (at most `SUITE_TASK_IDS_MAX_BYTES`, 300,000 bytes of JSON) plus
 * the rest (description ≤ 4,000 characters, owner, task source: a few KB), rounded up to 512 KiB so an over-long list
 * is answered by the clearer 400 on `taskIds` rather than a 413.
 */
export const SUITE_BODY_LIMIT = 512 * 1024;

/**
 * `POST /v1/suites`: registers a suite version; 201 when this call wrote it (a new suite, or a new version: omit
 * `version` and a changed task list gets the next one), 200 for an unchanged retry, 400 naming every offending field.
 * Through the API a suite's tasks draw repositories only from configured sources (`task-sources.ts`): never a folder
 * or path of the server, blobs only under the suite's own prefix, git remotes only from the allow-list.
 */
export function makePostSuiteHandler(ports: Ports): HttpApiHandler {
  const sources = taskSourcesFromEnv();
  return httpApi(
    async (event) => {
      await checkApiSuite(ports, parseInput(SuiteInput, event.jsonBody, 'suite'), sources);
      const { suite, created, previousVersion } = await registerSuite(ports, event.jsonBody);
      return { statusCode: created ? 201 : 200, body: { suite: suiteView(suite), created, ...(previousVersion !== undefined ? { previousVersion } : {}) } };
    },
    { jsonBodyMaxBytes: SUITE_BODY_LIMIT },
  );
}
