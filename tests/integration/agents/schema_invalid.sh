#!/bin/sh
# An agent whose result is JSON that breaks the analyze schema, one way per
# KPORT_TEST_CASE: numeric_verdict, unknown_field, missing_summary,
# unknown_enum, missing_verdict, unset_verdict.
echo "schema_invalid.sh: $KPORT_STAGE attempt $KPORT_ATTEMPT case ${KPORT_TEST_CASE:?}"
case "$KPORT_TEST_CASE" in
  numeric_verdict) json='{"verdict": 1, "summary": "verdict given as a number"}' ;;
  unknown_field) json='{"verdict": "PASS", "summary": "extra field", "confidence": 0.9}' ;;
  missing_summary) json='{"verdict": "PASS"}' ;;
  unknown_enum) json='{"verdict": "MOSTLY_PASS", "summary": "no such literal"}' ;;
  missing_verdict) json='{"summary": "no verdict at all"}' ;;
  unset_verdict) json='{"verdict": "UNSET", "summary": "the placeholder literal"}' ;;
  *) echo "schema_invalid.sh: unknown case $KPORT_TEST_CASE" >&2; exit 64 ;;
esac
printf '%s\n' "$json" > "$KPORT_RESULT"
