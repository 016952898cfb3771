#!/usr/bin/env bash
# Install what building and testing hxsim needs, only what is missing (safe to run again):
#   - the HDF5 C library and tools (libhdf5-dev, hdf5-tools), the netCDF tools (netcdf-bin: ncdump) and pkg-config,
#     from Debian/Ubuntu apt;
#   - h5py, numpy, pandas, xarray, h5netcdf, netCDF4 and matplotlib for the python3 on PATH (tests/python, python/,
#     the examples of docs/output.md), and setuptools and wheel (the python/ package's test installs it with pip, offline), from apt
#     when that python3 is the system one, else with pip.
# Runs as root, or through sudo when not root. PNG plots need no system fonts (one is built in).
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "setup.sh: not root and no sudo; install by hand: libhdf5-dev hdf5-tools netcdf-bin pkg-config, and h5py pandas xarray h5netcdf netCDF4 matplotlib for python3" >&2
    fi
fi

apt_updated=0
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup.sh: no apt-get here; install these by hand: $*" >&2
        return 1
    fi
    if [ "$apt_updated" -eq 0 ]; then
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        apt_updated=1
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
dpkg_has() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if command -v dpkg-query >/dev/null 2>&1; then
    for p in libhdf5-dev hdf5-tools netcdf-bin pkg-config; do
        dpkg_has "$p" || missing+=("$p")
    done
else
    pkg-config --exists hdf5 2>/dev/null || missing+=(libhdf5-dev pkg-config)
    command -v h5dump >/dev/null 2>&1 || missing+=(hdf5-tools)
    command -v ncdump >/dev/null 2>&1 || missing+=(netcdf-bin)
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup.sh: installing ${missing[*]}"
    apt_install "${missing[@]}"
fi

PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "setup.sh: installing python3"
    apt_install python3
fi
if ! "$PY" -c 'import h5py, numpy, pandas, xarray, h5netcdf, netCDF4, matplotlib, setuptools, wheel' >/dev/null 2>&1; then
    pypath="$(command -v "$PY")"
    case "$(readlink -f "$pypath")" in
        /usr/bin/*)
            echo "setup.sh: installing python3-h5py python3-pandas python3-xarray python3-h5netcdf python3-netcdf4 python3-matplotlib python3-setuptools python3-wheel (apt, for the system $PY)"
            apt_install python3-h5py python3-numpy python3-pandas python3-xarray python3-h5netcdf python3-netcdf4 python3-matplotlib \
                python3-setuptools python3-wheel
            ;;
        *)
            echo "setup.sh: installing h5py pandas xarray h5netcdf netCDF4 matplotlib setuptools wheel with pip (for $pypath)"
            "$PY" -m pip install --quiet --disable-pip-version-check h5py numpy pandas xarray h5netcdf netCDF4 matplotlib \
                setuptools wheel
            ;;
    esac
fi
"$PY" -c 'import h5py, numpy, pandas, xarray, h5netcdf, netCDF4, matplotlib, setuptools, wheel' || { echo "setup.sh: h5py/pandas/xarray/h5netcdf/netCDF4/matplotlib/setuptools/wheel still missing for $PY" >&2; exit 1; }
echo "setup.sh: ok (HDF5 $(pkg-config --modversion hdf5 2>/dev/null || echo '?'), h5py $("$PY" -c 'import h5py; print(h5py.__version__)'))"
