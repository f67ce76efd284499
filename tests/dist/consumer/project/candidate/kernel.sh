#!/bin/sh
# A correct port: the sum of the two arguments.
echo $(($1 + $2))
