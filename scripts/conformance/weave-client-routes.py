"""Every route the Weave SDK's vendored server client calls, as JSON lines {"method", "path"}.

Reads the client's resource modules (weave/vendor/weave_server_sdk/resources of an installed
weave) and prints each `self._get/_post/_put/_delete/_patch(path, ...)` call's method and path,
path parameters as `{name}`. Usage: python3 weave-client-routes.py <site-packages>/weave
(test/weave054-routes.test.ts reads it; the list it printed for 0.54.0 is
test/fixtures/weave054-routes.json).
"""

import ast
import json
import os
import sys


def path_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    # path_template("/objs/{object_id}/aliases", object_id=object_id)
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}" for v in node.values)
    return None


def main() -> None:
    root = os.path.join(sys.argv[1], "vendor", "weave_server_sdk", "resources")
    routes = set()
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("_get", "_post", "_put", "_delete", "_patch")
                    and node.args
                ):
                    path = path_of(node.args[0])
                    if path is not None:
                        routes.add((node.func.attr[1:].upper(), path))
    for method, path in sorted(routes, key=lambda r: (r[1], r[0])):
        print(json.dumps({"method": method, "path": path}))


main()
