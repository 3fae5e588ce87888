#!/bin/bash
# Runs each test function of test_calc.py in its own python3 (no pytest needed) and writes one JUnit report into the
# folder it is given, as the grader asks of a runner that is not pytest.
out="${1:-.}/junit.xml"
cases=""
fails=0
for t in test_add test_sub test_mul; do
  if python3 -c "import test_calc; test_calc.$t()" >/dev/null 2>&1; then
    cases="$cases<testcase classname=\"test_calc\" name=\"$t\"/>"
  else
    fails=$((fails+1))
    cases="$cases<testcase classname=\"test_calc\" name=\"$t\"><failure message=\"assertion failed\"/></testcase>"
  fi
done
echo "<?xml version=\"1.0\"?><testsuite name=\"calc\" tests=\"3\" failures=\"$fails\">$cases</testsuite>" > "$out"
[ "$fails" -eq 0 ]
