#!/usr/bin/env bash
# The pictures of the app in the README and the guide (docs/src/images/), made from the app
# itself:
#  1. the binary's test tui::picture_tests draws each pictured screen on ratatui's TestBackend
#     and writes it, colours and all, as docs/src/images/NAME.html (the picture's source);
#  2. tests/it/pictures.rs screenshots each source with headless Chromium into NAME.png and
#     records which source each PNG was made from in docs/src/images/pictures.sha256.
# `cargo test` then keeps them true without Chromium: tui::picture_tests fails when a source is
# no longer the app's screen, pictures:: when a PNG was not made from its current source.
#
# Needs Debian's `chromium` and a monospace font with box drawing (fonts-dejavu-core, which
# the pages ask for first): apt-get install chromium fonts-dejavu-core.
# Braille and other symbols the font lacks come from any fallback font (DejaVu Sans has
# Braille); the pages keep each of them to its cell, so the grid holds whatever font draws it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  echo "pictures: needs chromium in PATH: apt-get install chromium fonts-dejavu-core" >&2
  exit 1
fi
if command -v fc-list >/dev/null 2>&1 && ! fc-list | grep -q "DejaVu Sans Mono"; then
  echo "pictures: warning: no DejaVu Sans Mono (apt-get install fonts-dejavu-core);" \
    "the browser's default monospace font draws the pictures" >&2
fi

export AUTOLB_UPDATE_PICTURES=1
cargo test --quiet --bin autolb tui::picture_tests
cargo test --quiet --test it pictures::every_png -- --nocapture
git status --short docs/src/images 2>/dev/null || true
