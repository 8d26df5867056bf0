#!/usr/bin/env bash
# Seed corpus for the WAV fuzzer: tiny files in every encoding sox writes (plain and extensible), plus
# hand-made headers (odd chunk sizes, RF64, truncated data) when sox is missing. Usage: make_seeds.sh DIR
set -euo pipefail
dir=${1:?usage: make_seeds.sh DIR}
mkdir -p "$dir"
if command -v sox >/dev/null; then
  for spec in "-e unsigned -b 8" "-e signed -b 16" "-e signed -b 24" "-e signed -b 32" "-e float -b 32" \
              "-e float -b 64" "-e u-law -b 8" "-e a-law -b 8"; do
    for ch in 1 2 3; do
      name=$(echo "$spec" | tr -d ' -')-c$ch
      sox -V1 -D -n -r 8000 -c "$ch" $spec "$dir/$name.wav" synth 0.004 sine 440 2>/dev/null || true
      sox -V1 -D -n -r 8000 -c "$ch" $spec -t wavpcm "$dir/$name-pcm.wav" synth 0.004 sine 440 2>/dev/null || true
    done
  done
  # Pipe output: sox cannot seek back, so the sizes in the header are unknown (0 or 0xffffffff).
  sox -V1 -D -n -r 8000 -c 2 -b 16 -t wav - synth 0.004 sine 440 >"$dir/pipe.wav" 2>/dev/null || true
fi
# Hand-made headers: a minimal 16-bit mono file, one with an odd-sized extra chunk, and RF64.
hdr() { printf "RIFF$(printf '\\x%02x' "$1")\\x00\\x00\\x00WAVE"; }
fmt16='fmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00'
{ hdr 44; printf "$fmt16"; printf 'data\x08\x00\x00\x00\x00\x01\x00\x02\x00\x03\x00\x04'; } >"$dir/min16.wav"
{ hdr 54; printf 'LIST\x03\x00\x00\x00abc\x00'; printf "$fmt16"; printf 'data\x04\x00\x00\x00\x10\x00\x20\x00'; } >"$dir/oddchunk.wav"
{ printf 'RF64\xff\xff\xff\xffWAVEds64\x1c\x00\x00\x00'; printf '\x40\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00';
  printf "$fmt16"; printf 'data\xff\xff\xff\xff\x01\x00\x02\x00'; } >"$dir/rf64.wav"
{ hdr 44; printf "$fmt16"; printf 'data\x00\x10\x00\x00\x01\x00'; } >"$dir/truncated.wav"
ls "$dir" | wc -l
