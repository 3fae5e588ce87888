/**
 * OpenAPI descriptions of the console's open routes (merged into `OPERATIONS` of `lib/api/openapi.ts`): the page and
 * its files, served without a key; every call the page then makes needs one.
 */
import { z } from 'zod';
import { errorDoc, type OperationDoc } from '../../api/operation-docs.ts';

const AssetParams = z.object({ asset: z.string().meta({ description: 'A file name of the console build, e.g. `app-Q7RM3XCN.js`.' }) });

export const CONSOLE_OPERATIONS: Record<string, OperationDoc> = {
  getConsole: {
    summary: 'The web console (an HTML page; open, no key: sign in on the page with an API key)',
    responses: {
      200: { description: 'The page (never cached).', content: { 'text/html': { schema: z.string() } } },
      308: { description: 'Behind a stage prefix without its trailing slash: the same path with it.' },
      404: errorDoc('The console is not built in this deployment.'),
    },
  },
  getConsoleAsset: {
    summary: "One file of the console's build (script, stylesheet); hashed names are cached for a year",
    request: { params: AssetParams },
    responses: {
      200: { description: 'The file.', content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } } },
      400: errorDoc('Not a plain file name of the build (`issues` names `path.asset`).'),
      404: errorDoc('No such file in the build.'),
    },
  },
};
