# Sourced by the benchmark scripts.

# bench_make_groups AUTH_HEADER API [HOST]: 20 field groups of 10 fields
# (bench_1 … bench_20) through API (…/wp-json/fieldmgr/v1), asked as HOST
# when given, once.
bench_make_groups() {
  local auth=$1 api=$2 host=${3:+Host: $3} g i fields n
  for g in $(seq 1 20); do
    fields=""
    for i in $(seq 1 10); do
      fields="$fields${fields:+,}\"field_$i\":{\"type\":\"text\",\"label\":\"Field $i of group $g\",\"placeholder\":\"…\",\"maxlength\":80}"
    done
    curl -s -o /dev/null -H "$auth" ${host:+-H "$host"} -H 'Content-Type: application/json' \
      -d "{\"group_key\":\"bench_$g\",\"title\":\"Bench group $g\",\"config\":{\"type\":\"post\",\"post_type\":\"post\",\"fields\":{$fields}}}" "$api/field-groups"
  done
  n=$(curl -s -H "$auth" ${host:+-H "$host"} "$api/field-groups" | grep -o '"id":"bench_' | wc -l)
  [ "$n" -ge 20 ] || { echo "bench: only $n bench groups" >&2; exit 1; }
}
