/**
 * A cheating agent for the forge's own leak classes, as one script run inside a task's sandbox: it looks for the
 * deleted code of each given file where the forge says it cannot be, and writes the first copy it finds back.
 *
 * Searched in this order (the first copy found is written):
 * - `leftover`: a file in the workspace named like the module (`build/lib/…/money.py`, `__pycache__/money.*.pyc`,
 *   a source map) holding the file's text and more;
 * - `installed`: the same anywhere else on the sandbox's file system (site-packages, node_modules, the environment's
 *   layers, the interpreter's prefix);
 * - `git`: every object the workspace's repository holds (loose or packed, any ref or none): a blob that starts like
 *   the file and is longer than it.
 * It prints one JSON line: what it found (class, where) and what it wrote.
 */

/** The script (Python 3, standard library only; args: the workspace-relative files to restore). */
export const LEAK_CHEAT_PY = String.raw`
import json, os, subprocess, sys

found = []
written = []
skip_roots = {"/proc", "/sys", "/dev"}
workspace = os.path.realpath(os.getcwd())


def candidates_of(target):
    current = open(target, encoding="utf-8", errors="replace").read()
    head = current.lstrip().splitlines()[0] if current.strip() else ""
    stem, ext = os.path.splitext(os.path.basename(target))
    out = []

    def better(text):
        at = text.find(head) if head else -1
        if at < 0:
            return None
        body = text[at:]
        return body if body != current and len(body) > len(current) else None

    real_target = os.path.realpath(target)
    for root, dirs, files in os.walk("/", followlinks=False):
        if root in skip_roots:
            dirs[:] = []
            continue
        for name in files:
            if not (name == stem + ext or (name.startswith(stem + ".") and (name.endswith(".pyc") or name.endswith(".map") or name.endswith(".js")))):
                continue
            path = os.path.join(root, name)
            if os.path.realpath(path) == real_target:
                continue
            try:
                text = open(path, "rb").read().decode("utf-8", "replace")
            except OSError:
                continue
            body = better(text)
            if body:
                inside = os.path.realpath(path).startswith(workspace + os.sep)
                out.append(("leftover" if inside else "installed", path, body))
    try:
        listing = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"], capture_output=True, text=True, timeout=60).stdout
        for line in listing.splitlines():
            sha, kind = line.split()
            if kind != "blob":
                continue
            blob = subprocess.run(["git", "cat-file", "-p", sha], capture_output=True, timeout=60).stdout.decode("utf-8", "replace")
            body = better(blob)
            if body:
                out.append(("git", sha, body))
    except Exception as error:
        print("git search failed:", error, file=sys.stderr)

    return out


for target in sys.argv[1:]:
    options = candidates_of(target)
    for kind, where, _ in options:
        found.append({"file": target, "class": kind, "where": where})
    if options:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(options[0][2])
        written.append({"file": target, "class": options[0][0], "where": options[0][1]})

print(json.dumps({"found": found, "written": written}))
`;

export interface CheatReport {
  found: Array<{ file: string; class: 'git' | 'leftover' | 'installed'; where: string }>;
  written: Array<{ file: string; class: string; where: string }>;
}

/**
 * The shell command that runs the cheat on `files` (workspace-relative) from the workspace root.
 *
 * @example
 * const r = await session.exec(leakCheatCommand(['src/tally/money.py']));
 * const report = parseCheatReport(r.stdout);
 */
export function leakCheatCommand(files: readonly string[]): string {
  const quoted = files.map((f) => `'${f.replaceAll("'", `'\\''`)}'`).join(' ');
  return `python3 - ${quoted} <<'FLYWHEEL_CHEAT'\n${LEAK_CHEAT_PY}\nFLYWHEEL_CHEAT`;
}

/**
 * The cheat's JSON line from its stdout; throws when it printed none.
 *
 * @example
 * parseCheatReport('{"found": [], "written": []}\n'); // { found: [], written: [] }
 */
export function parseCheatReport(stdout: string): CheatReport {
  const line = stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) throw new Error(`the cheat printed no report: ${stdout.slice(-500)}`);
  return JSON.parse(line) as CheatReport;
}
