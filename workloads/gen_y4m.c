/* gen_y4m BYTES [WIDTH HEIGHT]: writes a deterministic YUV4MPEG2 video of
 * about BYTES bytes (whole 4:2:0 frames, default 320x240) to stdout, as input
 * for video encoders such as x264: a gradient that drifts, squares that move
 * at different speeds, and pseudo-random grain from a linear congruential
 * generator. The same arguments always give the same bytes. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long long bytes = argc > 1 ? atoll(argv[1]) : 1 << 20;
    int w = argc > 2 ? atoi(argv[2]) : 320, h = argc > 3 ? atoi(argv[3]) : 240;
    if (w < 16 || h < 16 || w % 2 || h % 2) {
        fprintf(stderr, "gen_y4m: WIDTH and HEIGHT must be even, at least 16\n");
        return 2;
    }
    long long frame_bytes = (long long)w * h * 3 / 2;
    long long frames = bytes / frame_bytes > 0 ? bytes / frame_bytes : 1;
    unsigned char *buf = malloc((size_t)frame_bytes);
    unsigned long long x = 12345;
    if (!buf)
        return 1;
    printf("YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C420jpeg\n", w, h);
    for (long long f = 0; f < frames; f++) {
        unsigned char *y = buf, *u = buf + (long)w * h, *v = u + (long)w * h / 4;
        for (int r = 0; r < h; r++)
            for (int c = 0; c < w; c++) {
                int val = (c + r + 2 * (int)f) & 0xff;
                for (int k = 0; k < 3; k++) {
                    int size = 24 + 8 * k, speed = k + 1;
                    int sx = (int)((40 + 60 * k + speed * f) % (w - size));
                    int sy = (int)((30 + 40 * k + speed * f / 2) % (h - size));
                    if (c >= sx && c < sx + size && r >= sy && r < sy + size)
                        val = 40 + 80 * k;
                }
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                val += (int)(x >> 61) - 3; /* grain of -3..4 */
                y[(long)r * w + c] = (unsigned char)(val < 0 ? 0 : val > 255 ? 255 : val);
            }
        for (int r = 0; r < h / 2; r++)
            for (int c = 0; c < w / 2; c++) {
                u[(long)r * (w / 2) + c] = (unsigned char)(128 + ((c - (int)f) & 63) - 32);
                v[(long)r * (w / 2) + c] = (unsigned char)(128 + ((r + (int)f) & 63) - 32);
            }
        printf("FRAME\n");
        fwrite(buf, 1, (size_t)frame_bytes, stdout);
    }
    free(buf);
    return 0;
}
