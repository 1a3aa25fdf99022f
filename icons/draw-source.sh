#!/usr/bin/env bash
# Draws icons/source.png (1024x1024 RGBA): a rounded square with a patch
# panel, three jacks a side, crossed cables. Regenerate the set with
#   ./icons/draw-source.sh && ui/node_modules/.bin/tauri icon icons/source.png -o /tmp/icons
# and copy the desktop files (32x32, 64x64, 128x128, 128x128@2x, icon.png,
# icon.icns, icon.ico) back here. Needs ImageMagick 6.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
convert -size 1024x1024 xc: -sparse-color barycentric '0,0 #4f46e5 1023,1023 #0ea5e9' "$tmp/grad.png"
convert -size 1024x1024 xc:none -fill white -draw "roundrectangle 64,64 959,959 200,200" "$tmp/mask.png"
convert "$tmp/grad.png" "$tmp/mask.png" -alpha off -compose CopyOpacity -composite -compose Over \
  -fill none -strokewidth 44 \
  -draw "stroke-linecap round stroke '#ffffff' bezier 300,330 520,330 500,694 724,694" \
  -draw "stroke-linecap round stroke '#fde68a' bezier 300,512 500,512 520,330 724,330" \
  -draw "stroke-linecap round stroke '#a7f3d0' bezier 300,694 520,694 500,512 724,512" \
  -fill '#0f172a' -stroke white -strokewidth 28 \
  -draw "circle 270,330 270,388" -draw "circle 270,512 270,570" -draw "circle 270,694 270,752" \
  -draw "circle 754,330 754,388" -draw "circle 754,512 754,570" -draw "circle 754,694 754,752" \
  -depth 8 -define png:color-type=6 source.png
