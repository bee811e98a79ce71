#!/usr/bin/env python3
"""Writes json_schema_cases.json: schemas, documents, and whether each document
is valid under its schema as the Python `jsonschema` package (4.26, Draft
2020-12) judges it (text that is not JSON is invalid), the independent reference json_schema_test.cpp checks the
grammars of engine/grammar/json_schema.h against. Every document is written as
the grammars write JSON (properties in the schema's order, at most one space or
a newline and indentation between tokens), so the grammar must take exactly
the valid ones.

    python3 tests/grammar/json_schema_cases.py   # rewrites the .json beside it
"""
import json
import os

import jsonschema

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer"},
        "email": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "age"],
}

CASES = [
    ("person", PERSON, [
        '{"name": "Ada", "age": 36}',
        '{"name": "Ada", "age": 36, "email": "a@b.c"}',
        '{"name": "Ada", "age": 36, "tags": ["x", "y"]}',
        '{"name": "Ada", "age": 36, "email": "", "tags": []}',
        '{\n  "name": "Ada",\n  "age": -7\n}',
        '{"name": "Ada"}',
        '{"age": 36}',
        '{"name": "", "age": 36}',
        '{"name": "Ada Lovelace Byron", "age": 36}',
        '{"name": "Ada", "age": 36.5}',
        '{"name": "Ada", "age": "36"}',
        '{"name": "Ada", "age": 36, "tags": ["a", "b", "c", "d"]}',
        '{"name": "Ada", "age": 36, "tags": [1]}',
        '{"name": "Ada", "age": 36,}',
        '{"name": "Ad\\u00e9 \\"q\\"", "age": 0}',
        '{"name": "Ada", "age": 012}',
    ]),
    ("enum-const-bool-null", {
        "type": "object",
        "properties": {
            "color": {"enum": ["red", "green", 3, None]},
            "kind": {"const": "fixed"},
            "ok": {"type": "boolean"},
            "nothing": {"type": "null"},
        },
        "required": ["color", "kind", "ok", "nothing"],
    }, [
        '{"color": "red", "kind": "fixed", "ok": true, "nothing": null}',
        '{"color": 3, "kind": "fixed", "ok": false, "nothing": null}',
        '{"color": null, "kind": "fixed", "ok": false, "nothing": null}',
        '{"color": "blue", "kind": "fixed", "ok": true, "nothing": null}',
        '{"color": "red", "kind": "other", "ok": true, "nothing": null}',
        '{"color": "red", "kind": "fixed", "ok": 1, "nothing": null}',
        '{"color": "red", "kind": "fixed", "ok": true, "nothing": 0}',
    ]),
    ("numbers", {
        "type": "array",
        "items": {"type": ["number", "string"]},
        "minItems": 2,
        "maxItems": 4,
    }, [
        '[1, 2]',
        '[1.5, -0.25e-3, "x"]',
        '[0, 1E+5, 2, "four"]',
        '[1]',
        '[1, 2, 3, 4, 5]',
        '[1, true]',
        '[]',
        '[01, 2]',
        '[1., 2]',
    ]),
    ("anyof-and-refs", {
        "$defs": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                      "required": ["x", "y"]},
            "tree": {"type": "object", "properties": {"value": {"type": "integer"},
                                                       "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
                     "required": ["value"]},
        },
        "type": "object",
        "properties": {
            "where": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "string"}]},
            "tree": {"$ref": "#/$defs/tree"},
        },
        "required": ["where"],
    }, [
        '{"where": {"x": 1, "y": 2}}',
        '{"where": "home"}',
        '{"where": {"x": 1, "y": 2}, "tree": {"value": 1, "children": [{"value": 2}, {"value": 3, "children": []}]}}',
        '{"where": {"x": 1}}',
        '{"where": 5}',
        '{"where": "home", "tree": {"children": []}}',
        '{"where": "home", "tree": {"value": 1, "children": [{"value": "x"}]}}',
    ]),
    ("additional-properties", {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "required": ["id"],
        "additionalProperties": {"type": "boolean"},
    }, [
        '{"id": 1}',
        '{"id": 1, "a": true, "b": false}',
        '{"id": 1, "a": 1}',
        '{"a": true}',
    ]),
    ("any-object-and-tuple", {
        "type": "object",
        "properties": {
            "meta": {"type": "object", "additionalProperties": True},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["meta", "pair"],
    }, [
        '{"meta": {}, "pair": ["a", 1]}',
        '{"meta": {"k": [1, {"z": null}], "q": "s"}, "pair": ["a", 1]}',
        '{"meta": [], "pair": ["a", 1]}',
        '{"meta": {}, "pair": [1, "a"]}',
    ]),
]


def verdict(validator, text):
    try:
        return validator.is_valid(json.loads(text))
    except json.JSONDecodeError:
        return False  # not JSON at all


def main():
    out = []
    for name, schema, docs in CASES:
        validator = jsonschema.Draft202012Validator(schema)
        out.append({
            "name": name,
            "schema": schema,
            "documents": [{"text": d, "valid": verdict(validator, d)} for d in docs],
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "json_schema_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
