# ncu --set full of one triton_mla_fast candidate per shape, with per-instruction stall samples (SASS CSV).
#   OUT=/some/dir bash tools/prof_gluon.sh "g-seesaw 64" "g-seesaw 8"     (candidate heads [ctx page])
export PYTHONPATH=$PWD
NCU=/usr/local/cuda/bin/ncu
for spec in "$@"; do
  set -- $spec; tag=$(echo $1 | tr -cd 'a-z0-9-')-h$2
  $NCU --set full --import-source yes --clock-control none -k regex:'_(gluon|hopper|fast)_(split|seesaw|ring)_kernel' --launch-skip 2 --launch-count 1 -o $OUT/$tag python3 tools/one_launch.py "$1" $2 ${3:-131072} ${4:-64} > /tmp/$tag.log 2>&1; echo "$tag exit $?"; tail -1 /tmp/$tag.log
  $NCU -i $OUT/$tag.ncu-rep --page source --csv --print-source sass > /tmp/$tag-sass.csv 2>&1; gzip -c /tmp/$tag-sass.csv > $OUT/$tag-sass.csv.gz
  $NCU -i $OUT/$tag.ncu-rep --page details --csv > $OUT/$tag-details.csv 2>&1
done
