# test/hosted/context_filter.awk: drop from psql's output the CONTEXT lines
# that name the SQL edition's own PL/pgSQL functions and the statements
# they run, which the C extension's functions do not produce; every other
# line, and the CONTEXT lines of the test's own code, pass unchanged.
function ours(line) {
	sub(/^CONTEXT:  /, "", line)
	# fence.forget() is PL/pgSQL in the C extension too: its lines stay
	if (line ~ /^PL\/pgSQL function fence\.forget\(interval\)/)
		return 0
	return line ~ /^PL\/pgSQL function fence\./ ||
		line ~ /^SQL function "fenced_update"/ ||
		line ~ /^SQL statement "SELECT fence\._/ ||
		line ~ /^SQL expression "fence\._/ ||
		line ~ /^SQL statement "SELECT fence\.advance\(resource, token, owner\)"/ ||
		line ~ /^SQL statement "SELECT fence\.advance(_many)?\(resources/ ||
		line ~ /^SQL statement "SELECT \*[ ]+FROM fence\._/ ||
		line ~ /^SQL function "fenced_update_many"/ ||
		line ~ /^SQL statement "SELECT set_config\(fence\._/
}
{
	if ($0 ~ /^CONTEXT:  /) {
		in_context = 1
		pending = 1
	} else if (in_context && !($0 ~ /^(PL\/pgSQL function|SQL statement|SQL expression|SQL function|[a-z]+ statement|COPY |JSON data|parallel worker)/)) {
		in_context = 0
	}
	if (in_context && ours($0))
		next
	if (in_context && pending && $0 !~ /^CONTEXT:  /)
		$0 = "CONTEXT:  " $0
	if (in_context)
		pending = 0
	print
}
