/**
 * Inferred return types for TypeScript functions that have no annotation. A body replaced by `throw` would change
 * their inferred type to `void`/`never` and break the callers' types; writing the original inferred type into the
 * signature keeps the rest of the repository type-checking. It is signature, not implementation, so it leaks nothing.
 */
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { returnTypeSlot } from '../parse/parse-typescript.ts';

export type ReturnTypeLookup = (path: string, slot: number) => string | undefined;

function compilerOptions(repoDir: string): ts.CompilerOptions {
  const configPath = ts.findConfigFile(repoDir, ts.sys.fileExists, 'tsconfig.json');
  const fallback: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
  };
  if (!configPath || !configPath.startsWith(repoDir)) return { ...fallback, noEmit: true };
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) return { ...fallback, noEmit: true };
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath));
  return { ...parsed.options, noEmit: true, skipLibCheck: true };
}

/**
 * True when every type name the printed type uses resolves where the annotation goes (a type from a module the file
 * does not import prints by its bare name; annotating with it would not compile, so such a type is left out).
 */
function namesResolve(printed: string, at: ts.Node, checker: ts.TypeChecker): boolean {
  const sf = ts.createSourceFile('annotation.ts', `type __Annotation = ${printed};`, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  let ok = true;
  const visit = (n: ts.Node): void => {
    if (!ok) return;
    if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n)) {
      let left: ts.Node = ts.isTypeReferenceNode(n) ? n.typeName : n.expression;
      while (ts.isQualifiedName(left)) left = left.left;
      while (ts.isPropertyAccessExpression(left)) left = left.expression;
      if (ts.isIdentifier(left) && !checker.resolveName(left.text, at, ts.SymbolFlags.Type | ts.SymbolFlags.Namespace | ts.SymbolFlags.Alias, false)) ok = false;
    }
    if (ts.isTypeQueryNode(n)) {
      let left: ts.Node = n.exprName;
      while (ts.isQualifiedName(left)) left = left.left;
      if (ts.isIdentifier(left) && !checker.resolveName(left.text, at, ts.SymbolFlags.Value | ts.SymbolFlags.Alias, false)) ok = false;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return ok;
}

/**
 * Builds one program over the given files (their imports resolve as the repository's tsconfig says) and answers
 * the printed return type at a signature's annotation slot, or undefined when it is `any`/unknown to the checker.
 *
 * @example
 * const lookup = inferReturnTypes(repoDir, ['src/calc.ts']);
 * lookup('src/calc.ts', outline.symbols[0].returnTypeAt!); // 'number'
 */
export function inferReturnTypes(repoDir: string, files: string[]): ReturnTypeLookup {
  const nodes = new Map<string, Map<number, ts.SignatureDeclaration>>();
  let program: ts.Program | undefined;
  const build = (): ts.Program => (program ??= ts.createProgram(files.map((f) => join(repoDir, f)), compilerOptions(repoDir)));
  return (path, slot) => {
    try {
      const p = build();
      let slots = nodes.get(path);
      if (!slots) {
        // Index the file's function-likes by their annotation slot once; types are computed only when asked.
        slots = new Map();
        nodes.set(path, slots);
        const sf = p.getSourceFile(join(repoDir, path));
        if (sf) {
          const visit = (n: ts.Node): void => {
            if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isGetAccessorDeclaration(n)) {
              const at = returnTypeSlot(sf.text, n, sf);
              if (at !== undefined) slots!.set(at, n);
            }
            ts.forEachChild(n, visit);
          };
          visit(sf);
        }
      }
      const node = slots.get(slot);
      if (!node) return undefined;
      const checker = p.getTypeChecker();
      const sig = checker.getSignatureFromDeclaration(node);
      if (!sig) return undefined;
      const type = checker.getReturnTypeOfSignature(sig);
      if (type.flags & ts.TypeFlags.Any) return undefined;
      const printed = checker.typeToString(type, node, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope);
      return printed && !printed.includes('...') && namesResolve(printed, node, checker) ? printed : undefined;
    } catch {
      // Inference is a convenience: without it the body is still replaced, only the annotation is missing.
      return undefined;
    }
  };
}
