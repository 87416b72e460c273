#!/bin/sh
# Build dist/desktop-memory.app (menu bar only: LSUIElement) and a dmg with an Applications link.
#   sh installers/macos/build_dmg.sh            (on macOS, after `pip install -e ".[build]"`)
# Signing and notarisation: see installers/README.md (set CODESIGN_ID to sign here).
set -eu
cd "$(dirname "$0")/../.."
python installers/build.py --out dist
app="dist/desktop-memory.app"
test -d "$app" || { echo "no $app: PyInstaller did not make the bundle" >&2; exit 1; }
if [ -n "${CODESIGN_ID:-}" ]; then
    codesign --force --deep --options runtime --timestamp --sign "$CODESIGN_ID" "$app"
fi
stage=$(mktemp -d)
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
hdiutil create -volname desktop-memory -srcfolder "$stage" -ov -format UDZO dist/desktop-memory.dmg
rm -rf "$stage"
"$app/Contents/MacOS/desktop-memory" --smoke-test
echo "built dist/desktop-memory.dmg"
