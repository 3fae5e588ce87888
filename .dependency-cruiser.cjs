/**
 * The import rules that keep the house in shape, checked by `npm run boundaries` (and so by `npm test`).
 * Proved to fire by test/architecture/boundaries.test.ts; the words are in docs/architecture.md.
 *
 * Vocabulary:
 * - capability: a folder lib/<cap>/ (each lib/harness/<sub>/ counts as one) that is not a shared place or a root.
 *   A new folder under lib/ is a capability unless it is added to NOT_CAPABILITY below.
 * - adapter folders of a capability: http/, infra/, workflow/, consumers/, local/. Everything else in the capability is
 *   its use cases (domain, schemas, record keys, event names): what it offers to other capabilities.
 * - composition roots: bin/, functions/, batch-images/, bench/, lib/stacks/, lib/local/, lib/cli/, lib/api/routes.ts.
 *   They wire ports to drivers and may import anything; nothing but a root (or a test) imports them.
 * - shared places, importable by all: lib/ports/, lib/shared/, lib/config/, lib/constructs/, lib/models/, lib/*.ts.
 *
 * @example
 * npm run boundaries        # every rule over bin lib functions batch-images bench test
 */

/** lib/ folders that are not capabilities: shared places, drivers, the HTTP shell and composition roots. */
const NOT_CAPABILITY = '(?:api|cli|config|constructs|drivers|local|models|ports|shared|stacks)';
/** A file inside a capability; group 1 names the capability (harness/<sub> for the harness). */
const CAPABILITY_FILE = `^lib/(?!${NOT_CAPABILITY}/)(harness/[^/]+|[^/]+)/`;
/** Any folder of lib/; group 1 names it (harness/<sub> for the harness), so a rule can exempt the same folder. */
const LIB_FOLDER = '^lib/((?:harness/)?[^/]+)/';
const ADAPTER_FOLDER = '(?:http|infra|workflow|consumers|local)';
const COMPOSITION_ROOT = '^(?:bin|functions|batch-images|bench)/|^lib/(?:stacks|local|cli)/|^lib/api/routes\\.ts$';
const AWS_SDK = '(?:^|/)node_modules/@aws-sdk/|^@aws-sdk/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle ties every module on it into one unit (a barrel once tied 19 files together). Move the shared ' +
        'piece into a file both sides import, or import from the defining file instead of a re-export.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'aws-sdk-only-in-drivers',
      severity: 'error',
      comment:
        '@aws-sdk is a driver concern: import it only in lib/drivers/aws/, functions/, batch-images/, a capability\'s ' +
        'infra/, or test/ (fixtures seed and inspect moto with a real client, independent of the driver under test). ' +
        'Elsewhere go through a port (lib/ports/) and let a composition root pick the AWS driver.',
      from: {
        pathNot: ['^lib/drivers/aws/', '^functions/', '^batch-images/', '^lib/.+/infra/', '^test/'],
      },
      to: { path: AWS_SDK },
    },
    {
      name: 'use-cases-not-api-or-drivers',
      severity: 'error',
      comment:
        'A use case (a capability file outside http/, infra/, workflow/, consumers/, local/) knows neither the HTTP shell ' +
        '(lib/api/) nor a driver (lib/drivers/): it takes ports and returns values or errors. Shared helpers such as ' +
        'toFieldIssues belong in lib/shared/.',
      from: { path: CAPABILITY_FILE, pathNot: `/${ADAPTER_FOLDER}/` },
      to: { path: '^lib/(?:api|drivers)/' },
    },
    {
      name: 'adapters-private-to-capability',
      severity: 'error',
      comment:
        'A capability offers its use cases, schemas and constants; its infra/, workflow/, consumers/ and local/ folders ' +
        'are private to it and to composition roots. Something two capabilities share goes to a shared place ' +
        '(CDK constructs: lib/constructs/; helpers: lib/shared/) or is passed in by the composition root.',
      from: { path: LIB_FOLDER, pathNot: COMPOSITION_ROOT },
      to: {
        path: `^lib/(?!${NOT_CAPABILITY}/)(?:harness/[^/]+|[^/]+)/(?:infra|workflow|consumers|local)/`,
        pathNot: '^lib/$1/',
      },
    },
    {
      name: 'http-adapters-private-to-capability',
      severity: 'error',
      comment:
        'A capability\'s http/ folder is private to it, to the HTTP shell lib/api/ (which assembles routes and the ' +
        'OpenAPI document) and to composition roots. Helpers several http/ folders share belong in lib/api/.',
      from: { path: LIB_FOLDER, pathNot: [COMPOSITION_ROOT, '^lib/api/'] },
      to: { path: `^lib/(?!${NOT_CAPABILITY}/)(?:harness/[^/]+|[^/]+)/http/`, pathNot: '^lib/$1/' },
    },
    {
      name: 'drivers-only-from-wiring',
      severity: 'error',
      comment:
        'Drivers implement ports; only the code that chooses them imports them: composition roots, the port factories ' +
        '(lib/ports/, lib/models/), and a capability\'s wiring folders infra/ (AWS, which sets what the AWS driver ' +
        'reads) and local/ (its `npm start` twin). Use cases, http/, consumers/ and workflow/ get ports passed in.',
      from: {
        path: '^lib/',
        pathNot: [COMPOSITION_ROOT, '^lib/(?:drivers|ports|models)/', '^lib/.+/(?:infra|local)/'],
      },
      to: { path: '^lib/drivers/' },
    },
    {
      name: 'composition-roots-are-leaves',
      severity: 'error',
      comment:
        'Composition roots (lib/stacks, lib/local, lib/cli, lib/api/routes.ts, bin, functions, batch-images, bench) ' +
        'wire everything and are imported only by other roots and tests. Code a capability needs from a root belongs ' +
        'in a shared place or a driver.',
      from: { path: '^lib/', pathNot: COMPOSITION_ROOT },
      to: { path: COMPOSITION_ROOT },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(?:cdk\\.out|\\.flywheel)/' },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
