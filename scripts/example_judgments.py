"""Hand-written queries and graded relevance judgments (draft)."""

from typing import TypedDict


class QuerySpec(TypedDict):
    text: str
    judgments: dict[str, int]


QUERIES: dict[str, QuerySpec] = {
    'q01': {"text": 'how do I catch several exceptions in one except clause', "judgments": {}},
    'q02': {"text": 'what does the global statement do', "judgments": {}},
    'q03': {"text": 'difference between is and ==', "judgments": {}},
    'q04': {"text": 'how are default argument values evaluated', "judgments": {}},
    'q05': {"text": 'what is the operator precedence of not', "judgments": {}},
    'q06': {"text": 'how does the with statement call __enter__ and __exit__', "judgments": {}},
    'q07': {"text": 'format spec: how to pad a number with leading zeros', "judgments": {}},
    'q08': {"text": 'slicing with a negative step to reverse a sequence', "judgments": {}},
    'q09': {"text": 'can I put arbitrary expressions inside f-strings', "judgments": {}},
    'q10': {"text": 'how to write a small anonymous function inline', "judgments": {}},
    'q11': {"text": 'what does yield do inside a function', "judgments": {}},
    'q12': {"text": 'how does async for work', "judgments": {}},
    'q13': {"text": 'how do decorators work', "judgments": {}},
    'q14': {"text": 'why do attributes starting with two underscores get renamed inside a class', "judgments": {}},
    'q15': {"text": 'how does a chained comparison like a < b < c work', "judgments": {}},
    'q16': {"text": 'does x += y modify a list in place or create a new object', "judgments": {}},
    'q17': {"text": 'how do I make instances of my class usable as dictionary keys', "judgments": {}},
    'q18': {"text": 'which values count as false in an if condition', "judgments": {}},
    'q19': {"text": 'when does the else block of a for loop run', "judgments": {}},
    'q20': {"text": 'how to raise a new exception from another one and keep the original cause', "judgments": {}},
    'q21': {"text": 'split a string on whitespace into a list of words', "judgments": {}},
    'q22': {"text": 'how do I switch on the shape of a value, like a switch/case statement', "judgments": {}},
    'q23': {"text": 'rebind a variable of the outer function from inside a nested function', "judgments": {}},
    'q24': {"text": 'how does integer division round with negative numbers', "judgments": {}},
    'q25': {"text": 'what happens step by step when I import a module', "judgments": {}},
    'q26': {"text": 'are variables defined in a class body shared between all instances', "judgments": {}},
    'q27': {"text": 'unpack a list into positional arguments when calling a function', "judgments": {}},
    'q28': {"text": 'how to declare keyword-only parameters', "judgments": {}},
    'q29': {"text": 'iterate over keys and values of a dict at the same time', "judgments": {}},
    'q30': {"text": 'skip the rest of the current loop iteration and go to the next one', "judgments": {}},
    'q31': {"text": 'remove an item from a list by its index', "judgments": {}},
    'q32': {"text": 'difference between __repr__ and __str__', "judgments": {}},
    'q33': {"text": 'make instances of a class callable like functions', "judgments": {}},
    'q34': {"text": 'overload the + operator for my own class, including when my object is on the right', "judgments": {}},
    'q35': {"text": 'when are assert statements removed or ignored', "judgments": {}},
    'q36': {"text": 'what is the ellipsis object ... used for', "judgments": {}},
    'q37': {"text": 'check whether a string contains only digits', "judgments": {}},
    'q38': {"text": 'write integers in hex, octal or binary and use underscores in number literals', "judgments": {}},
    'q39': {"text": 'how do I get the memory address of an object', "judgments": {}},
    'q40': {"text": 'read a CSV file into a list of dictionaries', "judgments": {}},
    'q41': {"text": 'schedule a function to run every day at midnight', "judgments": {}},
}
