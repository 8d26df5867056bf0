#!/usr/bin/env bash
# Make the WAV files that test_audio decodes: a short tone in every encoding sox writes (plain and
# WAVE_FORMAT_EXTENSIBLE), pipe output with unknown lengths, extra chunks, ALSA's sample sounds, and in bad/
# files that must be refused. For each good file, ref/NAME.f32 holds sox's own mono decoding (little-endian
# float32), so the decoder is checked against an independent one.
# Usage: make_wavs.sh DIR
set -euo pipefail

dir=${1:?usage: make_wavs.sh DIR}
command -v sox >/dev/null || { echo "make_wavs.sh: sox is needed (apt-get install sox)" >&2; exit 2; }
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/manifest.tsv" ]; then
    echo "make_wavs.sh: $dir is not empty and was not made by this script; refusing to touch it" >&2
    exit 2
fi
mkdir -p "$dir"
rm -rf "$dir"/*.wav "$dir"/*.WAV "$dir/ref" "$dir/bad" "$dir/manifest.tsv"
mkdir -p "$dir/ref" "$dir/bad"

manifest=$dir/manifest.tsv
bad=$dir/bad/manifest.tsv
seconds=0.5
level=0.5
printf '# file\trate_hz\tchannels\tbits\tis_float\tfmt_tag\tfreq_hz\tamplitude\tnsamples\n' >"$manifest"
printf '# file\texpected message text\n' >"$bad"

# -D: no dither, so files are deterministic; -V1: only failures (sox warns about pipe output by design).
soxq() { sox -V1 -D "$@"; }

le32() {
    local v=$1
    printf '%b' "\\x$(printf %02x $((v & 255)))\\x$(printf %02x $((v >> 8 & 255)))"
    printf '%b' "\\x$(printf %02x $((v >> 16 & 255)))\\x$(printf %02x $((v >> 24 & 255)))"
}

fmt_tag() {
    local b
    read -r -a b < <(od -An -tu1 -j20 -N2 "$1")
    printf '0x%04X' $((b[1] * 256 + b[0]))
}

# Odd channels are shifted by a quarter cycle, so the mono mix really averages different samples;
# the mix then has amplitude level * |ceil(c/2) + i floor(c/2)| / c.
synth_args() {
    local ch=$1 freq=$2 c
    for ((c = 0; c < ch; c++)); do
        printf '%s\n' sine "$freq" 0 $((c % 2 * 25))
    done
}

mix_amplitude() {
    awk -v c="$1" -v a="$level" 'BEGIN { e = int((c + 1) / 2); o = int(c / 2); printf "%.6f", a * sqrt(e * e + o * o) / c }'
}

record() { # FILE RATE CHANNELS BITS IS_FLOAT FREQ AMPLITUDE NSAMPLES [TAG]
    local f=$1 name
    name=$(basename "$f")
    soxq "$f" -L -t f32 -c 1 "$dir/ref/$name.f32"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$2" "$3" "$4" "$5" "${9:-$(fmt_tag "$f")}" "$6" "$7" "$8" >>"$manifest"
}

gen() { # NAME RATE CHANNELS BITS ENCODING TYPE FREQ [pipe]
    local name=$1 rate=$2 ch=$3 bits=$4 enc=$5 type=$6 freq=$7 how=${8:-file}
    local out=$dir/$name isf=0
    local -a fx
    mapfile -t fx < <(synth_args "$ch" "$freq")
    if [ "$how" = pipe ]; then
        soxq -n -r "$rate" -c "$ch" -b "$bits" -e "$enc" -t "$type" - synth "$seconds" "${fx[@]}" vol "$level" | cat >"$out"
    else
        soxq -n -r "$rate" -c "$ch" -b "$bits" -e "$enc" -t "$type" "$out" synth "$seconds" "${fx[@]}" vol "$level"
    fi
    [ "$enc" = floating-point ] && isf=1
    record "$out" "$rate" "$ch" "$bits" "$isf" "$freq" "$(mix_amplitude "$ch")" $((rate / 2))
}

gen u8_mono_8000.wav 8000 1 8 unsigned-integer wav 440
gen u8_stereo_22050.wav 22050 2 8 unsigned-integer wav 1000
gen s16_mono_8000.wav 8000 1 16 signed-integer wav 1000
gen s16_mono_22050.wav 22050 1 16 signed-integer wav 3150
gen s16_mono_44100.wav 44100 1 16 signed-integer wav 1000
gen s16_stereo_48000.wav 48000 2 16 signed-integer wav 1000
gen s16_mono_96000.wav 96000 1 16 signed-integer wav 6300
gen s16_6ch_48000_ext.wav 48000 6 16 signed-integer wav 1000
gen s16_6ch_48000_plain.wav 48000 6 16 signed-integer wavpcm 1000
gen s24_mono_44100_ext.wav 44100 1 24 signed-integer wav 1000
gen s24_mono_44100_plain.wav 44100 1 24 signed-integer wavpcm 440
gen s24_stereo_96000_ext.wav 96000 2 24 signed-integer wav 3150
gen s32_mono_48000_ext.wav 48000 1 32 signed-integer wav 1000
gen s32_stereo_44100_plain.wav 44100 2 32 signed-integer wavpcm 1000
gen f32_mono_44100.wav 44100 1 32 floating-point wav 1000
gen f32_stereo_48000.wav 48000 2 32 floating-point wav 440
gen f32_6ch_44100.wav 44100 6 32 floating-point wav 1000
gen f64_mono_44100.wav 44100 1 64 floating-point wav 1000
gen f64_stereo_96000.wav 96000 2 64 floating-point wav 6300
gen UPPER_s16_mono_11025.WAV 11025 1 16 signed-integer wav 1000
# sox cannot seek back on a pipe, so these carry its "unknown length" data size (0x7ffff000 in whole frames).
gen pipe_s16_mono_44100.wav 44100 1 16 signed-integer wav 1000 pipe
gen pipe_s24_mono_44100_ext.wav 44100 1 24 signed-integer wav 1000 pipe
gen pipe_f32_stereo_48000.wav 48000 2 32 floating-point wav 440 pipe

# Extra chunks as other encoders write them: an odd-sized chunk (with its pad byte) before fmt, and a
# LIST/INFO chunk whose comment is odd-sized between fmt and data.
src=$dir/s16_mono_44100.wav
spliced=$dir/chunks_s16_mono_44100.wav
{
    head -c 12 "$src"
    printf 'wbtx'; le32 5; printf 'hello\0'
    head -c 36 "$src" | tail -c 24
    printf 'LIST'; le32 28; printf 'INFO'; printf 'ICMT'; le32 15; printf 'wulfbench test\0\0'
    tail -c +37 "$src"
} >"$spliced"
size=$(($(stat -c %s "$spliced") - 8))
le32 "$size" | dd of="$spliced" bs=1 seek=4 conv=notrunc status=none
record "$spliced" 44100 1 16 0 1000 "$level" 22050 0x0001

for f in /usr/share/sounds/alsa/*.wav; do
    [ -f "$f" ] || continue
    out=$dir/alsa_$(basename "$f")
    cp "$f" "$out"
    record "$out" "$(sox --i -r "$f")" "$(sox --i -c "$f")" "$(sox --i -b "$f")" 0 0 0 "$(sox --i -s "$f")"
done

bad_enc() { # NAME ENCODING EXPECTED
    soxq -n -r 8000 -c 1 -e "$2" -t wav "$dir/bad/$1" synth 0.1 sine 1000 vol 0.5
    printf '%s\t%s\n' "$1" "$3" >>"$bad"
}
bad_enc ms_adpcm.wav ms-adpcm 'unsupported WAV format 0x0002 (MS ADPCM)'
bad_enc ima_adpcm.wav ima-adpcm 'unsupported WAV format 0x0011 (IMA ADPCM)'
bad_enc alaw.wav a-law 'unsupported WAV format 0x0006 (A-law)'
bad_enc mulaw.wav mu-law 'unsupported WAV format 0x0007 (mu-law)'
bad_enc gsm.wav gsm-full-rate 'unsupported WAV format 0x0031 (GSM 6.10)'

bad_type() { # NAME SOXTYPE EXPECTED
    if soxq -n -r 8000 -c 1 -t "$2" "$dir/bad/$1" synth 0.1 sine 1000 vol 0.5 2>/dev/null; then
        printf '%s\t%s\n' "$1" "$3" >>"$bad"
    else
        rm -f "$dir/bad/$1"
        echo "make_wavs.sh: this sox cannot write $2; skipping bad/$1" >&2
    fi
}
bad_type flac_named.wav flac 'looks like FLAC'
bad_type ogg_named.wav vorbis 'looks like Ogg'
bad_type aiff_named.wav aiff 'looks like AIFF'
bad_type w64_named.wav w64 'looks like Sony Wave64'
bad_type au_named.wav au 'looks like Sun AU'
soxq -n -r 8000 -c 1 -b 16 -e signed-integer -B -t wav "$dir/bad/rifx.wav" synth 0.1 sine 1000 vol 0.5
printf '%s\t%s\n' rifx.wav 'big-endian (RIFX)' >>"$bad"
printf 'this is a text file, not audio\n' >"$dir/bad/text.wav"
printf '%s\t%s\n' text.wav 'no RIFF/WAVE header' >>"$bad"
head -c 30 "$src" >"$dir/bad/cut_in_fmt.wav"
printf '%s\t%s\n' cut_in_fmt.wav "'fmt ' chunk claims 16 bytes but only 10 remain" >>"$bad"
head -c 1000 "$src" >"$dir/bad/cut_in_data.wav"
printf '%s\t%s\n' cut_in_data.wav 'data chunk claims 44100 bytes but only 956 remain' >>"$bad"

echo "make_wavs.sh: $(grep -vc '^#' "$manifest") good and $(grep -vc '^#' "$bad") bad files in $dir"
