#!/bin/sh
# Quick local checks.
touch checked
