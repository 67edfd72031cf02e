/* gnuplot output: scaling curves, per-device memory breakdowns and
 * predicted-versus-measured collective times.
 *
 * Each function writes a gnuplot script and its data to a private temporary
 * directory and runs `gnuplot` on it (found in PATH; the SHARDSIM_GNUPLOT
 * environment variable names another binary).  The format comes from the
 * output path's extension: ".png" (pngcairo) or ".svg".  Labels are passed to
 * gnuplot as quoted strings with enhanced-text markup off, so any text is
 * drawn literally.  Values that are NaN or, on logarithmic axes, not positive
 * are left out of the picture.
 *
 * Units in: seconds, bytes, samples per second, efficiency as a fraction
 * (1 = perfect).  Axes show ms/s, GiB and percent; every axis names its unit.
 *
 * Errors: a bad argument (no series, unknown extension) is SIM_ERROR_INPUT;
 * gnuplot missing, failing or writing no file is SIM_ERROR_INTERNAL with its
 * stderr in the message. */
#ifndef PLOT_H
#define PLOT_H

#include "sim_error.h"

/* More curves than this on one panel become small multiples (facets). */
#define PLOT_MAX_CURVES 6

/* One variant of a sweep: n points; any of the y arrays may be NULL, and a
 * panel is drawn only when some series has it. */
typedef struct {
    const char *label;
    int n;
    const double *x;          /* devices */
    const double *step_time;  /* s */
    const double *throughput; /* samples/s */
    const double *efficiency; /* fraction */
    const double *memory;     /* bytes per device */
    const char *group;        /* facet (NULL: the label up to its first ", ") */
} PlotSeries;

/* Up to four panels (step time, throughput, scaling efficiency, memory per
 * device) against device count on a log2 axis, one curve per series,
 * legends below the axes.  More than PLOT_MAX_CURVES series: small
 * multiples, a row of panels per facet, every facet on the same scales;
 * the facets are the series' groups when there are several of at most
 * PLOT_MAX_CURVES series each, else runs of PLOT_MAX_CURVES series. */
bool plot_scaling(const char *path, const PlotSeries *series, int nseries, GError **err);

typedef struct {
    const char *label; /* variant: "replicated", "ZeRO-3", ... */
    /* bytes per device: every component of the memory model's total */
    double weights, gradients, optimizer, activations, buffers, working_set, reserve;
} PlotMemoryBar;

/* Stacked bars, one per variant, a labelled colour per component (legend
 * outside, right); a dashed horizontal line at `capacity` bytes (HBM)
 * unless capacity <= 0.  A component that is 0 in every bar has no legend
 * entry. */
bool plot_memory(const char *path, const PlotMemoryBar *bars, int nbars, double capacity, GError **err);

/* One measured trace and its prediction: n sizes; either time array may hold
 * NaN where there is no value (measured may be NULL: prediction only). */
typedef struct {
    const char *label;
    int n;
    const double *size;      /* bytes */
    const double *measured;  /* s */
    const double *predicted; /* s */
    const double *p10, *p90; /* s, the predicted band (may be NULL) */
    const double *baseline;  /* s, another prediction drawn dashed (may be NULL) */
    const char *baseline_label;
} PlotTrace;

/* Measured points and predicted lines (same colour per trace) against
 * message size (bytes), time (s), both axes logarithmic; the p10-p90 band
 * shaded where both bounds are known (an error bar at a single size), the
 * baseline dashed where given; a single predicted size is an open circle;
 * the legend below the axes. */
bool plot_validation(const char *path, const char *title, const PlotTrace *traces, int ntraces,
                     GError **err);

/* One panel of a Pareto plot: every candidate (x, y) as a dot, the front
 * (fx, fy, sorted by x) as a line; y is days to train. */
typedef struct {
    const char *xlabel;
    bool logx;
    int n;
    const double *x, *y;
    int nfront;
    const double *fx, *fy;
} PlotParetoPanel;

/* The panels side by side under `title`. */
bool plot_pareto(const char *path, const char *title, const PlotParetoPanel *panels, int npanels, GError **err);

#endif
