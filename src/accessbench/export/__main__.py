"""python -m accessbench.export > docs/export-schema-v1.json: the published JSON Schema."""

from .model import schema_json

print(schema_json(), end="")
