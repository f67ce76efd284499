#!/bin/sh
# A port with a real bug: it keeps only the low 8 bits of the sum, so the
# small cases pass and the large ones fail.
echo $((($1 + $2) & 255))
