/* libFuzzer target: the WAV decoder on arbitrary bytes. It must return 0 or an error, never crash, and a
 * success must describe samples it really holds. Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>

#include "core/audio.h"
#include "core/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wb_audio a = {0};
    int rc = wb_audio_decode_wav(data, size, "fuzz.wav", &a);
    if (rc == 0) {
        if (a.nsamples < 1 || !a.samples || a.channels < 1 || a.sample_rate_hz < 1)
            abort();
        volatile float sink = a.samples[0] + a.samples[a.nsamples - 1];
        (void)sink;
    } else if (rc != WB_EINPUT && rc != WB_ENOMEM) {
        abort();
    }
    wb_audio_free(&a);
    return 0;
}
