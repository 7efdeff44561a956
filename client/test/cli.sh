echo "# cli tests: todo"
