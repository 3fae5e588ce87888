"""Structure of Python source files through Python's own `ast` module, for the forge (lib/forge/parse/parse-python.ts).

Reads a JSON list of absolute paths on stdin; writes one JSON object on stdout mapping each path to its outline:
functions, classes (with members), imports, and the names each function body references. Positions are
[line (1-based), column in UTF-8 bytes] pairs, as `ast` gives them; the caller converts them to string offsets.
"""
import ast
import io
import json
import sys
import tokenize


def pos(node, end=False):
    if end:
        return [node.end_lineno, node.end_col_offset]
    return [node.lineno, node.col_offset]


def docstring_node(body):
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[0]
    return None


def references(node):
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls"):
            names.add("this." + sub.attr)
    return sorted(names)


def function_outline(node):
    doc = docstring_node(node.body)
    rest = node.body[1:] if doc is not None else node.body
    return {
        "kind": "function",
        "name": node.name,
        "async": isinstance(node, ast.AsyncFunctionDef),
        "start": pos(node.decorator_list[0]) if node.decorator_list else pos(node),
        "defStart": pos(node),
        "end": pos(node, True),
        "decorators": [ast.get_source_segment(SOURCE, d) or "" for d in node.decorator_list],
        "doc": ast.get_docstring(node, clean=False) if doc is not None else None,
        "docStart": pos(doc) if doc is not None else None,
        "docEnd": pos(doc, True) if doc is not None else None,
        "bodyStart": pos(node.body[0]),
        "restStart": pos(rest[0]) if rest else None,
        "references": references(ast.Module(body=node.body, type_ignores=[])),
    }


def class_outline(node):
    doc = docstring_node(node.body)
    members = []
    for stmt in node.body:
        if stmt is doc:
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            members.append(function_outline(stmt))
        else:
            kind = "annotation" if isinstance(stmt, ast.AnnAssign) else "assign" if isinstance(stmt, ast.Assign) else "other"
            members.append({"kind": kind, "start": pos(stmt), "end": pos(stmt, True)})
    return {
        "kind": "class",
        "name": node.name,
        "start": pos(node.decorator_list[0]) if node.decorator_list else pos(node),
        "defStart": pos(node),
        "end": pos(node, True),
        "doc": ast.get_docstring(node, clean=False) if doc is not None else None,
        "docStart": pos(doc) if doc is not None else None,
        "docEnd": pos(doc, True) if doc is not None else None,
        "bodyStart": pos(node.body[0]),
        "members": members,
        "references": references(ast.Module(body=node.body, type_ignores=[])),
    }


def import_outline(node, top):
    names = [{"name": a.name, "asname": a.asname} for a in node.names]
    base = {"start": pos(node), "end": pos(node, True), "topLevel": top, "names": names}
    if isinstance(node, ast.Import):
        return {"kind": "import", "module": None, "level": 0, **base}
    return {"kind": "from", "module": node.module, "level": node.level, **base}


def exported_names(tree):
    """The names `__all__` lists, when the module assigns it a literal list or tuple of strings (else None)."""
    names = None
    for stmt in tree.body:
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = stmt.value
        if not isinstance(value, (ast.List, ast.Tuple)):
            continue
        listed = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        names = (names or []) + listed if isinstance(stmt, ast.AugAssign) else listed
    return names


def code_lines(source, tree):
    """Line numbers holding code: not blank, not comment-only, not part of a docstring (module, class, function)."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = docstring_node(node.body)
            if doc is not None:
                docs.update(range(doc.lineno, doc.end_lineno + 1))
    lines = set()
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in skip:
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        # What tokenize refuses (rare, the parser accepted it): every non-blank line that is not a comment.
        lines = {i + 1 for i, line in enumerate(source.split("\n")) if line.strip() and not line.strip().startswith("#")}
    return sorted(lines - docs)


def outline(source):
    global SOURCE
    SOURCE = source
    tree = ast.parse(source)
    symbols = []
    imports = []
    top_ids = set()
    for stmt in tree.body:
        top_ids.add(id(stmt))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            symbols.append(function_outline(stmt))
        elif isinstance(stmt, ast.ClassDef):
            symbols.append(class_outline(stmt))
    for sub in ast.walk(tree):
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            imports.append(import_outline(sub, id(sub) in top_ids))
    return {
        "symbols": symbols,
        "imports": imports,
        "moduleReferences": references(tree),
        "all": exported_names(tree),
        "codeLines": code_lines(source, tree),
    }


SOURCE = ""


def main():
    paths = json.load(sys.stdin)
    result = {}
    for path in paths:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            result[path] = outline(data.decode("utf-8"))
        except (SyntaxError, ValueError, UnicodeDecodeError, OSError) as error:
            result[path] = {"error": f"{type(error).__name__}: {error}"}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
