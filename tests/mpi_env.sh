# Sourced by the tests that start MPI jobs: sets launcher=(mpirun ...) for N
# ranks on this machine.  CI runs as root; Open MPI refuses that without these.
# Open MPI's own allocations are not freed at exit: the caller runs MPI jobs
# with ASAN_OPTIONS=detect_leaks=0.  Cross-memory attach is often forbidden in
# containers.  A missing mpirun is a failure, not a skip: .ci/install-deps
# installs Open MPI.
mpi_launcher() {
    command -v mpirun >/dev/null || fail "mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev)"
    launcher=(mpirun -np "$1")
    if mpirun --version 2>&1 | grep -q "Open MPI"; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
        launcher=(mpirun --allow-run-as-root --oversubscribe -np "$1")
    fi
}
